// A plain message from brand.example, for the tests that sign and verify one (DKIM).
export const ORDER_MESSAGE = [
  "From: News <news@brand.example>",
  "To: reader@example.org",
  "Subject: Your order",
  "Date: Fri, 27 Nov 2026 10:00:00 +0000",
  "Message-ID: <order-1@brand.example>",
  "MIME-Version: 1.0",
  "Content-Type: text/plain; charset=utf-8",
  "",
  "Your order has shipped.",
  "",
].join("\r\n");
