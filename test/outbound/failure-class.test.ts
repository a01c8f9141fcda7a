// The bounce classifier over real replies: what the large providers document (Gmail's SMTP
// error reference, support.google.com/a/answer/3726730; Microsoft's Exchange Online NDR
// codes, learn.microsoft.com "Email non-delivery reports and SMTP errors"; Yahoo's
// postmaster error codes, postmaster.yahooinc.com/error-codes; Proofpoint, Mimecast,
// Spamhaus and Barracuda listing replies as their lookup pages quote them) and the bounce
// corpus (test/corpus/bounces, sisimai's set-of-emails: the file named, its DSN status and
// diagnostic as bounce-parse.ts reads them, clipped). Each row is one reply with the class
// an operator acting on it needs.
import { describe, expect, test } from "bun:test";
import { classifyFailure, type FailureClass } from "../../src/outbound/bounces/failure-class.ts";

interface Row {
  source: string;
  code: number | null;
  text: string;
  status?: string | null;
  class: FailureClass;
}

const GMAIL = "Gmail SMTP errors and codes";
const MS = "Microsoft Exchange Online NDR";
const YAHOO = "Yahoo postmaster error codes";

const PROVIDERS: Row[] = [
  {
    source: GMAIL,
    code: 550,
    text: "550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces.",
    class: "hard",
  },
  { source: GMAIL, code: 550, text: "550 5.2.1 The email account that you tried to reach is disabled.", class: "hard" },
  {
    source: GMAIL,
    code: 452,
    text: "452 4.2.2 The email account that you tried to reach is over quota. Please direct the recipient to Clear Google Drive space & increase storage.",
    class: "mailbox_full",
  },
  {
    source: GMAIL,
    code: 552,
    text: "552 5.2.2 The recipient's inbox is out of storage space. Please direct the recipient to Clear Google Drive space & increase storage.",
    class: "mailbox_full",
  },
  { source: GMAIL, code: 552, text: "552 5.2.3 Your message exceeded Google's message size limits.", class: "message" },
  { source: GMAIL, code: 552, text: "552 5.3.4 Your message exceeded Google's message header size limits.", class: "message" },
  {
    source: GMAIL,
    code: 550,
    text: "550 5.7.1 Our system has detected that this message is likely unsolicited mail. To reduce the amount of spam sent to Gmail, this message has been blocked.",
    class: "block",
  },
  {
    source: GMAIL,
    code: 421,
    text: "421 4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address. To protect our users from spam, mail sent from your IP address has been temporarily rate limited.",
    class: "throttled",
  },
  {
    source: GMAIL,
    code: 550,
    text: "550 5.7.28 There is an unusual rate of unsolicited mail originating from your IP address. To protect our users from spam, mail sent from your IP address has been blocked.",
    class: "throttled",
  },
  {
    source: GMAIL,
    code: 550,
    text: "550 5.7.26 This mail has been blocked because the sender is unauthenticated. Gmail requires all senders to authenticate with either SPF or DKIM.",
    class: "dmarc",
  },
  {
    source: GMAIL,
    code: 550,
    text: "550 5.7.26 Unauthenticated email from example.com is not accepted due to domain's DMARC policy. Please contact the administrator of example.com domain if this was a legitimate mail.",
    class: "dmarc",
  },
  {
    source: GMAIL,
    code: 421,
    text: "421 4.7.0 This message does not have authentication information or fails to pass authentication checks. To best protect our users from spam, the message has been blocked.",
    class: "dmarc",
  },
  {
    source: GMAIL,
    code: 550,
    text: "550 5.7.27 The sender address does not pass SPF. For more information, go to Email sender guidelines.",
    class: "dmarc",
  },
  {
    source: GMAIL,
    code: 451,
    text: "451 4.7.24 The SPF record of the sending domain has one or more suspicious entries. To protect our users from spam, mail sent from your IP address has been temporarily rate limited.",
    class: "throttled",
  },
  {
    source: GMAIL,
    code: 550,
    text: "550 5.7.25 The IP address sending this message does not have a PTR record setup, or the corresponding forward DNS entry does not point to the sending IP.",
    class: "block",
  },
  {
    source: GMAIL,
    code: 450,
    text: "450 4.2.1 The user you are trying to contact is receiving mail too quickly. Please resend your message at a later time.",
    class: "throttled",
  },
  { source: GMAIL, code: 421, text: "421 4.3.0 Temporary System Problem. Try again later", class: "transient" },
  { source: GMAIL, code: 421, text: "421 4.4.5 Server busy, try again later.", class: "transient" },
  { source: GMAIL, code: 421, text: "421 4.7.0 IP not in whitelist for RCPT domain, closing connection.", class: "block" },
  {
    source: GMAIL,
    code: 550,
    text: "550 5.7.1 Messages missing a valid address in From: header, or having no From: header, are not accepted.",
    class: "message",
  },
  {
    source: GMAIL,
    code: 552,
    text: "552 5.7.0 This message was blocked because its content presents a potential security issue.",
    class: "block",
  },
  {
    source: GMAIL,
    code: 550,
    text: "550 5.7.1 This message violates example.com email policy. - gcdp <sessionid> - gsmtp",
    class: "block",
  },
  { source: MS, code: 550, text: "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup", class: "hard" },
  { source: MS, code: 550, text: "550 5.1.1 RESOLVER.ADR.RecipNotFound; not found", class: "hard" },
  { source: MS, code: 550, text: "550 5.4.1 Recipient address rejected: Access denied. AS(201806281)", class: "hard" },
  {
    source: MS,
    code: 550,
    text: "550 5.7.606 Access denied, banned sending IP [192.0.2.1]. To request removal from this list please visit https://sender.office.com/ and follow the directions.",
    class: "block",
  },
  {
    source: MS,
    code: 550,
    text: "550 5.7.1 Unfortunately, messages from [192.0.2.1] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3150).",
    class: "block",
  },
  {
    source: MS,
    code: 550,
    text: "550 5.7.1 Service unavailable, Client host [192.0.2.1] blocked using Spamhaus. To request removal from this list see https://www.spamhaus.org/query/ip/192.0.2.1 AS(1450)",
    class: "block",
  },
  {
    source: MS,
    code: 451,
    text: "451 4.7.650 The mail server [192.0.2.1] has been temporarily rate limited due to IP reputation.",
    class: "throttled",
  },
  { source: MS, code: 451, text: "451 4.7.500 Access denied, please try again later.", class: "throttled" },
  { source: MS, code: 550, text: "550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP.", class: "block" },
  {
    source: MS,
    code: 550,
    text: "550 5.7.509 Access denied, sending domain example.com does not pass DMARC verification and has a DMARC policy of reject.",
    class: "dmarc",
  },
  {
    source: MS,
    code: 550,
    text: "550 5.7.515 Access denied, sending domain example.com doesn't meet the required authentication level.",
    class: "dmarc",
  },
  { source: MS, code: 550, text: "550 5.2.2 STOREDRV.Deliver: mailbox full.", class: "mailbox_full" },
  { source: MS, code: 550, text: "550 5.2.3 RESOLVER.RST.RecipSizeLimit; message too large for this recipient", class: "message" },
  { source: MS, code: 550, text: "550 4.4.7 QUEUE.Expired; message expired", class: "transient" },
  { source: MS, code: 554, text: "554 5.4.14 Hop count exceeded - possible mail loop ATTR34", class: "other" },
  {
    source: YAHOO,
    code: 421,
    text: "421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes",
    class: "throttled",
  },
  {
    source: YAHOO,
    code: 421,
    text: "421 4.7.1 [TS03] All messages from 192.0.2.1 will be permanently deferred; Retrying will NOT succeed. See https://postmaster.yahooinc.com/error-codes",
    class: "block",
  },
  {
    source: YAHOO,
    code: 554,
    text: "554 5.7.9 Message not accepted for policy reasons. See https://postmaster.yahooinc.com/error-codes",
    class: "block",
  },
  {
    source: YAHOO,
    code: 553,
    text: "553 5.7.2 [TSS09] All messages from 192.0.2.1 will be permanently deferred; Retrying will NOT succeed. See https://postmaster.yahooinc.com/error-codes",
    class: "block",
  },
  {
    source: YAHOO,
    code: 554,
    text: "554 5.7.9 Message not accepted for policy reasons. DMARC policy of example.com is reject.",
    class: "dmarc",
  },
  { source: YAHOO, code: 451, text: "451 Resources temporarily not available - Please try again later [#4.16.1].", class: "transient" },
  {
    source: YAHOO,
    code: 554,
    text: "554 delivery error: dd This user doesn't have a yahoo.com account (user@yahoo.com) [0] - mta1234.mail.gq1.yahoo.com",
    class: "hard",
  },
  {
    source: YAHOO,
    code: 554,
    text: "554 delivery error: dd Sorry your message to user@yahoo.com cannot be delivered. This mailbox is disabled (554.30). - mta1234.mail.gq1.yahoo.com",
    class: "hard",
  },
  { source: "Proofpoint", code: 554, text: "554 5.7.0 Blocked - see https://ipcheck.proofpoint.com/?ip=192.0.2.1", class: "block" },
  { source: "Proofpoint", code: 550, text: "550 5.7.1 Message rejected due to DMARC policy of the sender domain", class: "dmarc" },
  {
    source: "Mimecast",
    code: 550,
    text: "550 Rejected by header based Anti-Spoofing policy: user@example.com - https://community.mimecast.com/docs/DOC-1369#550",
    class: "block",
  },
  { source: "Mimecast", code: 451, text: "451 Open relay not allowed - https://community.mimecast.com/docs/DOC-1369#451", class: "block" },
  { source: "Mimecast", code: 550, text: "550 Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550", class: "hard" },
  {
    source: "Spamhaus",
    code: 554,
    text: "554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/192.0.2.1",
    class: "block",
  },
  {
    source: "Barracuda",
    code: 554,
    text: "554 Service unavailable; Client host [192.0.2.1] blocked using Barracuda Reputation; http://www.barracudanetworks.com/reputation/?r=1&ip=192.0.2.1",
    class: "block",
  },
  { source: "SpamCop", code: 550, text: "550 5.7.1 Rejected: 192.0.2.1 listed at bl.spamcop.net", class: "block" },
  {
    source: "Apple iCloud",
    code: 554,
    text: "554 5.7.1 Your message was rejected due to example.com's DMARC policy. See https://support.apple.com/en-us/HT204137 for info",
    class: "dmarc",
  },
  { source: "Postfix", code: 450, text: "450 4.7.1 Client host rejected: cannot find your hostname, [192.0.2.1]", class: "transient" },
  {
    source: "Postfix greylisting",
    code: 450,
    text: "450 4.2.0 <user@example.org>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.org.html",
    class: "transient",
  },
  { source: "no connection (our own)", code: null, text: "connect ECONNREFUSED 192.0.2.1:25", class: "transient" },
  { source: "no connection (our own)", code: null, text: "connection to the mail server was lost", class: "transient" },
];

const C = "test/corpus/bounces/";
const CORPUS: Row[] = [
  {
    source: `${C}lhost-amavis-01.eml`,
    code: null,
    status: "5.1.1",
    text: "550 5.1.1 <neko@example.co.jp>: Recipient address rejected: User unknown in virtual mailbox table",
    class: "hard",
  },
  { source: `${C}lhost-amavis-03.eml`, code: null, status: "5.7.0", text: "554 5.7.0 Reject, id=20025-09 - SPAM", class: "block" },
  {
    source: `${C}lhost-amazonses-03.eml`,
    code: null,
    status: "5.1.0",
    text: "5.1.0 - Unknown address error 550-'5.2.2 <kijitora@example.jp>... Mailbox Full' (delivery attempts: 0)",
    class: "mailbox_full",
  },
  {
    source: `${C}lhost-amazonses-14.eml`,
    code: null,
    status: "5.7.1",
    text: "554 5.7.1 <a8-95.smtp-out.amazonses.com[203.0.113.22]>: Client host rejected: blocked using mail.neko.example.org; Please see http://mail.neko.example.org/rbl/?ip=203.0.113.22 to send.",
    class: "block",
  },
  {
    source: `${C}lhost-amazonses-16.eml`,
    code: null,
    status: "5.7.1",
    text: "521-5.7.1 Service unavailable; client [203.0.113.225] blocked using dnsbl.sorbs.net",
    class: "block",
  },
  {
    source: `${C}lhost-amazonses-17.eml`,
    code: null,
    status: "4.4.7",
    text: "554 4.4.7 Message expired: unable to deliver in 840 minutes.<421 4.4.2 Connection timed out>",
    class: "transient",
  },
  {
    source: `${C}lhost-dragonfly-06.eml`,
    code: null,
    status: "5.7.25",
    text: "550 5.7.25 <blocked@libsisimai.net>: Recipient address rejected: Reverse DNS validation failed",
    class: "block",
  },
  {
    source: `${C}lhost-dragonfly-12.eml`,
    code: null,
    status: "5.2.2",
    text: "552 5.2.2 <mailboxfull@libsisimai.net>: Recipient address rejected: Mailbox full",
    class: "mailbox_full",
  },
  {
    source: `${C}lhost-dragonfly-20.eml`,
    code: null,
    status: "5.7.0",
    text: "550 5.7.0 <spamdetected@libsisimai.net>: Recipient address rejected: Spam detected",
    class: "block",
  },
  {
    source: `${C}lhost-einsundeins-02.eml`,
    code: null,
    status: null,
    text: "kijitora@example.org For the following reason: Mail size limit exceeded. For explanation visit http://postmaster.1and1.com/en/error-messages",
    class: "message",
  },
  {
    source: `${C}lhost-exchange2003-01.eml`,
    code: null,
    status: null,
    text: "The recipient name is not recognized MSEXCH:IMS:NNN:KIJITORACAT:NEKO 0 (000C05A6) Unknown Recipient",
    class: "hard",
  },
  {
    source: `${C}lhost-exim-29.eml`,
    code: null,
    status: "5.0.0",
    text: "550 Bad SPF records for [example.org:192.0.2.2], see http://spf.pobox.com/",
    class: "dmarc",
  },
  { source: `${C}lhost-exim-34.eml`, code: null, status: "5.7.1", text: "554 5.7.1 Reverse DNS failed.", class: "block" },
  {
    source: `${C}lhost-exim-47.eml`,
    code: null,
    status: null,
    text: "550-192.0.2.222 blocked by ldap:ou=nekochan,dc=example,dc=net 550 Error - Blocked for abuse.",
    class: "block",
  },
  { source: `${C}lhost-exim-58.eml`, code: null, status: null, text: "500 Line limit exceeded", class: "message" },
  {
    source: `${C}lhost-exim-59.eml`,
    code: null,
    status: "5.1.1",
    text: "550 5.1.1 unknown or illegal alias: kijitora@icloud.example.com",
    class: "hard",
  },
  {
    source: `${C}lhost-gmail-19.eml`,
    code: null,
    status: null,
    text: "Technical details of permanent failure: Storage quota exceeded",
    class: "mailbox_full",
  },
  {
    source: `${C}lhost-imailserver-06.eml`,
    code: null,
    status: null,
    text: "550-REJECTED - Blacklisted URL in message. (example.com) in [black]. 550-See http://lookup.uribl.com.",
    class: "block",
  },
  {
    source: `${C}lhost-office365-03.eml`,
    code: null,
    status: "5.1.0",
    text: "550 5.1.0 192.0.2.222 is not allowed to send from <example.net> per it's SPF Record. Please inspect your SPF settings, and try again.",
    class: "dmarc",
  },
  {
    source: `${C}lhost-office365-13.eml`,
    code: null,
    status: "5.1.10",
    text: "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup",
    class: "hard",
  },
  {
    source: `${C}lhost-opensmtpd-13.eml`,
    code: null,
    status: "4.0.0",
    text: "421 4.7.0 [TSS04] Messages from 192.0.2.25 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1",
    class: "throttled",
  },
  {
    source: `${C}lhost-opensmtpd-16.eml`,
    code: null,
    status: "4.4.7",
    text: "systemfull@libsisimai.net: Envelope expired Please note that this is only a temporary failure report.",
    class: "transient",
  },
  {
    source: `${C}lhost-postfix-08.eml`,
    code: null,
    status: "4.4.1",
    text: "connect to example.com[93.184.216.119]: Connection timed out",
    class: "transient",
  },
  {
    source: `${C}lhost-postfix-09.eml`,
    code: null,
    status: "4.3.2",
    text: "452 4.3.2 Connection rate limit exceeded.",
    class: "throttled",
  },
  {
    source: `${C}lhost-postfix-38.eml`,
    code: null,
    status: "5.0.0",
    text: "554 Blocked - see https://support.proofpoint.com/dnsbl-lookup.cgi?ip=192.0.2.225",
    class: "block",
  },
  {
    source: `${C}lhost-postfix-39.eml`,
    code: null,
    status: "5.6.0",
    text: "554 5.6.0 This message has been scored as spam with a probability of more than 90% (in reply to end of DATA command)",
    class: "message",
  },
  { source: `${C}lhost-postfix-48.eml`, code: null, status: "5.0.0", text: "552 Too many recipients", class: "message" },
  {
    source: `${C}lhost-postfix-58.eml`,
    code: null,
    status: "5.7.1",
    text: "550-5.7.1 [192.0.2.22 18] Our system has detected that this message is likely suspicious due to the very low reputation of the sending IP address.",
    class: "block",
  },
  {
    source: `${C}lhost-postfix-59.eml`,
    code: null,
    status: "5.2.1",
    text: "550-5.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered.",
    class: "throttled",
  },
  {
    source: `${C}lhost-postfix-63.eml`,
    code: null,
    status: "5.2.2",
    text: "552 5.2.2 <neko@nyaaan.example.org> Quota exceeded (mailbox for user is full)",
    class: "mailbox_full",
  },
  {
    source: `${C}lhost-postfix-66.eml`,
    code: null,
    status: "5.7.9",
    text: "554 5.7.9 Message not accepted for policy reasons. See https://postmaster.verizonmedia.com/error-codes",
    class: "block",
  },
  {
    source: `${C}lhost-postfix-70.eml`,
    code: null,
    status: "5.7.26",
    text: "550-5.7.26 Unauthenticated email from libsisimai.org is not accepted due to domain's DMARC policy.",
    class: "dmarc",
  },
  {
    source: `${C}lhost-postfix-72.eml`,
    code: null,
    status: "5.7.1",
    text: "550 5.7.1 This message was not accepted due to domain (libsisimai.org) owner DMARC policy (RFC 7489) https://help.mail.ru/mail-help/postmaster/dmarc",
    class: "dmarc",
  },
  {
    source: `${C}lhost-postfix-73.eml`,
    code: null,
    status: "5.7.1",
    text: "550 5.7.1 Email rejected per DMARC policy for libsisimai.org",
    class: "dmarc",
  },
  {
    source: `${C}lhost-exchange2007-03.eml`,
    code: null,
    status: "5.2.3",
    text: "550 5.2.3 RESOLVER.RST.RecipSizeLimit; message too large for this recipient",
    class: "message",
  },
  {
    source: `${C}lhost-yahoo-14.eml`,
    code: 554,
    status: null,
    text: "554 INVALID IP FOR SENDING MAIL OF DOMAIN amazonses.com [RCPT_TO]",
    class: "other",
  },
  {
    source: `${C}rhost-aol-01.eml`,
    code: null,
    status: "5.4.4",
    text: "Host or domain name not found. Name service error for name=example.jp type=A: Host not found",
    class: "hard",
  },
  {
    source: `${C}lhost-postfix-10.eml`,
    code: null,
    status: "5.1.8",
    text: "553 5.1.8 <root@vagrant-centos65.vagrantup.com>... Domain of sender address root@vagrant-centos65.vagrantup.com does not exist",
    class: "block",
  },
  {
    source: `${C}lhost-postfix-05.eml`,
    code: null,
    status: "4.1.1",
    text: "450 4.1.1 <kijitora@example.org>: Recipient address rejected: User unknown in virtual alias table",
    class: "transient",
  },
  {
    source: `${C}lhost-mcafee-05.eml`,
    code: null,
    status: null,
    text: "550 <kijitora-nyaan@example.co.jp>... User not exist",
    class: "hard",
  },
];

describe("classifyFailure", () => {
  test("the table holds at least 60 real replies, every class among them", () => {
    const rows = [...PROVIDERS, ...CORPUS];
    expect(rows.length).toBeGreaterThanOrEqual(60);
    expect(new Set(rows.map((r) => r.class)).size).toBe(8);
  });
  test.each([...PROVIDERS, ...CORPUS].map((r) => [r.source, r.text.slice(0, 60), r] as const))("%s: %s", (_s, _t, r) => {
    expect(classifyFailure({ code: r.code, text: r.text, status: r.status })).toBe(r.class);
  });
  test("a domain that does not exist (no reply) is hard", () => {
    expect(classifyFailure({ code: null, text: "the domain example.invalid does not exist", noSuchDomain: true })).toBe("hard");
  });
});
