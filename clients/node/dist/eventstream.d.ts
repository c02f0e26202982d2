export declare const CONTENT_TYPE = "application/vnd.amazon.eventstream";
/** AWS event-stream messages fed in byte chunks of any size; a frame that fails its checksum
 * stops the watching (the bytes still reach the caller). */
export declare class EventStreamParser {
    private buf;
    broken: boolean;
    feed(chunk: Uint8Array): [string, string][];
    private break;
}
