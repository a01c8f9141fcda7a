// s3rver (the S3 server the attachment tests upload to) ships no types.
declare module "s3rver" {
  interface S3rverOptions {
    port?: number;
    address?: string;
    silent?: boolean;
    directory: string;
    configureBuckets?: { name: string; configs: unknown[] }[];
    /** false: a Host that is a name (not localhost, not an IP) is not read as a bucket. */
    vhostBuckets?: boolean;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
    /** "event": an S3 event notification (an object created, copied, deleted). */
    on(event: "event", listener: (e: { Records: { eventName: string; s3: { object: { key: string } } }[] }) => void): this;
  }
}
