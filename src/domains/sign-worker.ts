// Worker thread entry: DKIM-signs the messages the pool sends (sign-pool.ts).
import { dkimSignatures, type SignRequest } from "./dkim.ts";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<{ id: number; request: SignRequest }>) => {
  const { id, request } = event.data;
  try {
    self.postMessage({ id, ok: true, signatures: await dkimSignatures(request) });
  } catch (err) {
    self.postMessage({ id, ok: false, message: (err as Error).message });
  }
};
