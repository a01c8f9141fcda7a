// The [tls] section of the config schema: where certificates come from (files or ACME)
// and when they are renewed. Apart from schema.ts so each part of the config reads on its
// own; schema.ts composes the sections.
import { Type } from "@sinclair/typebox";
import { duration, listen, section, str } from "./schema-keys.ts";

export const TlsSection = section(
  {
    mode: Type.Union([Type.Literal("off"), Type.Literal("files"), Type.Literal("acme")], {
      default: "off",
      description: "where certificates come from",
      errorMessage: 'must be "off", "files" or "acme"',
    }),
    cert_file: str("", "PEM certificate chain (mode files)"),
    key_file: str("", "PEM private key (mode files)"),
    check_interval: duration("1m", "how often the files are checked for a replaced certificate and the ACME certificate for renewal"),
    renew_before: duration("30d", "an ACME certificate is renewed when less than this remains"),
    expiry_warning: duration("14d", "/healthz warns about a certificate that expires within this"),
    acme: section(
      {
        directory_url: str("https://acme-v02.api.letsencrypt.org/directory", "ACME directory of the CA", {
          format: "http-url",
          errorMessage: "must be an http(s) URL",
        }),
        email: str("", "contact address given to the CA"),
        domains: Type.Array(Type.String(), { default: [], description: "names the certificate covers" }),
        challenge_listen: listen("0.0.0.0:80", "where HTTP-01 challenges are answered"),
        ca_file: str("", "extra CA bundle to trust for the ACME server"),
        key_type: Type.Union([Type.Literal("rsa"), Type.Literal("ecdsa")], {
          default: "rsa",
          description: "key of the certificate: RSA 2048 (every SMTP client) or ECDSA P-256",
          errorMessage: 'must be "rsa" or "ecdsa"',
        }),
        failure_backoff: duration("5m", "wait after a failed order before the first retry; doubles with each further failure, up to a day"),
      },
      "ACME (mode acme)",
    ),
  },
  "certificates",
);
