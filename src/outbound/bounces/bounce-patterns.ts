// The phrase tables behind bounce-parse.ts for reports that are not RFC 3464 DSNs: how
// each kind of mail delivery software words its bounces, where it quotes the original
// message, how it names the failed recipient, and which wordings mean a temporary
// failure. Formats studied from the sisimai set-of-emails corpus (qmail, Exim, Postfix,
// Sendmail, Exchange, Domino, Gmail, Yahoo, GMX, ezweb, DragonFly, ...); no code copied.

/** An address inside text; the domain needs a dot and ends with a letter or digit. */
export const ADDRESS = /[\w.!#$%&'*+/=?^`{|}~-]+@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?/gi;

/** A bounce sender: mailer-daemon, postmaster (and its misspellings), "Mail Delivery System". */
export const DAEMON_SENDER =
  /(?:^|[\s<"(])(?:mailer[-_.]?daemon|post_?master|poostmaster|mail\.delivery\.system|mmsc|sysadmin)\b|mail(?:er)? deliver(?:y)? (?:system|subsystem|service)|internet mail delivery|content-filter|interscan/i;

/** Subjects of delivery reports (English first, then the localised ones seen in the wild). */
export const BOUNCE_SUBJECT = new RegExp(
  [
    "undeliver(?:able|ed)",
    "delivery (?:status notification|failure|failed|has failed|notification|report|status)",
    "(?:mail|message) delivery (?:failed|failure|has failed|status)",
    "returned mail",
    "failure notice",
    "failed delivery|failure delivery|permanent delivery failure",
    "could not (?:be delivered|send)",
    "non remis|non recapitabile|unzustellbar|no entregado|não entregue|onbestelbaar",
    "mail system error|error sending your mail|delayed mail|notice: mail delivery status",
    "warning: message .* delayed|delivery status notification|mail failure",
    "message you sent blocked|considered unsolicited|mail failed|returning (?:message )?to sender",
    "メールエラー|配信エラー|配信できません|送信できません|Недоставленное|Ваше сообщение не доставлено",
  ].join("|"),
  "i",
);

/** Body phrases only delivery reports use. */
export const BOUNCE_BODY = new RegExp(
  [
    "this is the qmail-send program",
    "created automatically by mail delivery software",
    "this is the (?:mail system|dragonfly mail agent)",
    "(?:could not|cannot|can't|was not|wasn't able to|unable to) (?:be )?deliver",
    "delivery (?:to the following recipients? (?:failed|has been delayed)|has failed|failed)",
    "did not reach the following recipient",
    "following (?:addresses|address\\(es\\)|address|recipients?) (?:had|failed|could not|was rejected|returned|did not)",
    "(?:permanent|temporary) (?:fatal )?(?:error|failure)",
    "the original message was received at",
    "recipients? (?:was|were) rejected by",
    "your (?:mail|message) (?:could not|was not|cannot|sent on)",
    "has been delayed|will be retried|still being retried|message delivery has failed",
    "we had trouble delivering your message|not listed in (?:domino|public name)",
    "\\bnon-delivery report|\\bundeliverable\\b|giving up on|i'm afraid i wasn't able",
    "requested action not taken|no such user|user unknown|message log follows|failed addresses follow",
    "送信できませんでした|送信に失敗しました|配信できませんでした|届きませんでした",
  ].join("|"),
  "i",
);

/** Phrases that alone make a message a delivery report, whoever sent it. */
export const BOUNCE_BODY_STRONG = new RegExp(
  [
    "this is the qmail-send program",
    "created automatically by mail delivery software",
    "this is the (?:mail system at host|dragonfly mail agent)",
    "could not be delivered to:",
    "delivery to the following recipients? failed permanently",
    "the following addresses had permanent fatal errors",
    "did not reach the following recipient",
  ].join("|"),
  "i",
);

/** Where a non-standard report stops and the quoted original message begins. */
export const ORIGINAL_MARKERS = [
  /^[ \t-]*below this line is a copy of the message/im,
  /^[ \t-]*this is a copy of the message/im,
  /^[ \t-]*(?:the )?header of the original message/im,
  /^[ \t-]*(?:original message|original mail)(?: follows| as follows| headers?)?[ \t.:-]*$/im,
  /^[ \t-]*(?:unsent|returned|undelivered) message(?: follows)?[ \t.:-]*$/im,
  /^[ \t]*message headers follow/im,
  /^[ \t]*original message:/im,
  /^[ \t-]*(?:original|returned) (?:message|mail) (?:header|headers|text)[ \t.:-]*$/im,
  /^(?:return-path|received|dkim-signature|x-received|arc-seal|x-google-smtp-source|message-id):[ \t]/im,
];

/**
 * Lines that name the failed recipient, most specific first; group 1 is the address
 * (possibly with <> or quotes around it, which the caller strips).
 */
export const RECIPIENT_LINES: readonly RegExp[] = [
  // fml: "You are not a member of this mailing list <list@domain>."
  /member of (?:this|the) mailing list <([^\s<>"]+@[^\s<>"]+)>/i,
  // qmail, Postfix without DSN, Yahoo, GMX, OpenSMTPD: a line starting "<user@domain>:"
  /^[ \t]*"?<?([^\s<>"]+@[^\s<>":]+)>?"?:(?:[ \t]|$)/m,
  // Exim, Gmail, ezweb, x1: the address alone on its line, maybe bracketed or followed by a reason
  /^[ \t]*(?:\*[ \t]*)?"?<?([^\s<>"]+@[^\s<>"\]:]+)>?"?[ \t]*(?:\[[^\]]*\])?[ \t]*$/m,
  // labelled: "Recipient: <a@b>", "RCPT TO: a@b", "Could not be delivered to: <a@b>"
  /(?:recipient(?: address)?|rcpt to|delivered to|delivering your mail to|delivery failed|failed recipient|not delivered to|address(?:es)? failed|original-recipient|final-recipient|unable to deliver message to|to the following address)[ \t]*[:;]?[ \t]*(?:rfc822;)?[ \t]*<?([^\s<>"]+@[^\s<>":,;]+)/i,
  // sendmail-like transcript: ">>> a@b <a@b>" or "<a@b>... User unknown"
  /^[ \t]*>>>[ \t]*<?([^\s<>"]+@[^\s<>":]+)/m,
  /<([^\s<>"]+@[^\s<>"]+)>\.\.\./,
  // Exchange 2003 ("a@b on Thu, ..."), Domino and mailmarshal: an indented or bare address starting a line
  /^[ \t]*<?([^\s<>"]+@[^\s<>":]+)>?[ \t]+(?:on|\(|\[|-)/m,
];

/** Texts that mean the mailbox is full or over quota: soft, even with a 5.x.x code (see classOf). */
export const MAILBOX_FULL =
  /mailbox (?:is )?full|mail ?box (?:has )?exceeded|(?:over|exceeded?(?:ed|s)?(?: the| its| their)?(?: storage| disk| mailbox)?) ?quota|quota (?:exceeded|full)|storage quota|insufficient (?:disk |storage )?space|mail ?folder is full|mailbox size limit exceeded|mailbox is over|mailbox (?:would )?exceed|user(?:'s)? (?:mailbox|disk) (?:is )?full|number of messages in recipient's mailbox exceeded|mailbox.{0,20}exceeded|\bmailboxfull\b|messagelimit exceeded/i;

/** Wordings of temporary trouble: a delay warning, a retry, a time-out, greylisting. */
export const SOFT_TEXT =
  /temporar|try again later|try later|deferred|\bdelay(?:ed)?\b|timed? ?out|greylist|graylist|rate limit|too many (?:connections|messages|recipients)|will be retried|still being retried|warning message only|queue too long|could not send (?:mail|message) for past|not responding|connection (?:refused|reset|timed)|resources temporarily|socket error|service (?:temporarily )?unavailable|host name lookup failure|unable to connect|\bexpired\b|cannot send message for|no route to host|\btry again\b|not reachable|could not deliver for the last|after multiple retries|have been failing for a long time/i;

/** Texts that say the address or domain does not exist (hard, whatever else the report says). */
export const HARD_TEXT =
  /user unknown|unknown user|no such (?:user|mailbox|recipient|address|domain)|does not exist|not exist|doesn't have an? .{0,80} account|recipient (?:name is )?not (?:found|recognized)|not listed in|invalid (?:recipient|address|user|mailbox)|mailbox (?:unavailable|not found|disabled)|account (?:is |has been )?disabled|host unknown|domain not found|unrouteable|unroutable|address rejected|no mailbox here|user not found/i;

/** Automatic reply subjects (vacation, out of office) in the languages seen most. */
export const AUTO_REPLY_SUBJECT =
  /^(?:(?:re|aw|fw|fwd):\s*)?(?:auto(?:matic|matische)?[ -]?(?:reply|response|respons|antwort|answer)|auto:|out of (?:the )?office|away from|abwesenheitsnotiz|abwesend|réponse automatique|risposta automatica|respuesta automática|resposta automática|automatisch antwoord|afwezig|autosvar|poza biurem|fuera de la oficina|absence|vacation|on vacation|i am (?:out|away)|自動応答|自動返信|自动回复|不在)/i;
