import { link } from "../router.ts";

export function NotFound({ what = "page" }: { what?: string }) {
  return (
    <section aria-labelledby="nf">
      <h1 id="nf">Not found</h1>
      <p>
        There is no such {what} in this account. <a {...link("/addresses")}>Back to the addresses</a>
      </p>
    </section>
  );
}
