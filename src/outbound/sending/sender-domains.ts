// What sending needs from the sending-domains feature, as an interface (the domains
// feature implements it): whether mail may go out from a domain, and its DKIM signature.

export interface SenderDomains {
  /** Why mail from `fromDomain` may not go out for this account, or null when it may. */
  refusal(accountId: string, fromDomain: string, testMode: boolean): Promise<string | null>;
  /** The message with its DKIM signature(s) prepended. */
  sign(accountId: string, fromDomain: string, raw: Buffer): Promise<Buffer>;
}
