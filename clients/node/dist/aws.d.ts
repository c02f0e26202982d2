/**
 * Amazon Bedrock through the AWS SDK for JavaScript v3, limited by llmctl:
 *
 *     import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";
 *     import { Client, aws } from "llmctl-client";
 *
 *     const bedrock = aws.limit(new BedrockRuntimeClient({}), { client: new Client(), key: "bedrock/{model}" });
 *     await bedrock.send(new ConverseCommand({ modelId, messages, inferenceConfig: { maxTokens: 512 } }));
 *
 * The SDK signs every request (SigV4, the host included), so neither `limitedFetch` nor the
 * proxy can stand in front of it. `limit` adds a middleware to the client's stack instead, for
 * Converse, ConverseStream, InvokeModel and InvokeModelWithResponseStream, between the SDK's
 * retries and its signing, so it runs once for every attempt:
 *
 * - before the attempt is signed and sent, a lease is acquired on the key (`{model}`: the model
 *   or inference-profile id from the request's path; `{region}`: the client's region), estimated
 *   from the body (messages, system, `inferenceConfig.maxTokens` or `max_tokens`); a lease not
 *   granted is thrown as a `ThrottlingException` (status 429, `error.llmctl` says why), so code
 *   that handles Bedrock's throttles handles it;
 * - after the attempt, the lease is reported with the status, the error's name and message and
 *   the usage (`usage` of a Converse answer, InvokeModel's token-count headers, a stream's
 *   `metadata` event or invocation metrics as the caller reads the stream);
 * - the SDK's retry strategy gives way to the daemon's advice for these calls: an attempt is
 *   retried when, and after the delay, the daemon says (at most `maxRetries` times), and the
 *   SDK's own retry quota is left to the client's other calls. One retry layer, which every
 *   process on the host shares.
 *
 * Other commands pass untouched. `limit` on a client already limited changes nothing.
 */
import type { Advice, Client } from "./client.js";
/** The Bedrock runtime commands that spend a model's quota. */
export declare const LIMITED_COMMANDS: ReadonlySet<string>;
export interface AwsLimitOptions {
    client: Client;
    /** The quota's name; `{model}` is the call's model or inference profile, `{region}` the
     * client's region (default "bedrock/{model}"). */
    key?: string;
    priority?: number;
    /** How long each acquire may wait in the daemon, in ms (default an hour). */
    maxWait?: number;
    runId?: string;
    profile?: string;
    /** At most this many retries of one call on the daemon's advice (default 20). */
    maxRetries?: number;
    /** Called with the key and the daemon's advice after every report. */
    onAdvice?: (key: string, advice: Advice) => void;
}
/** The parts of a client of the AWS SDK v3 `limit` uses. */
export interface AwsClientLike {
    middlewareStack: {
        addRelativeTo(middleware: unknown, options: Record<string, unknown>): void;
    };
    config: Record<string, unknown>;
}
type Names = [string, string, string, string];
type Usage = [number, number, number];
/** (all input, cached input, output) from Bedrock's counts of input, output, cache read and
 * cache written under `names`: Bedrock's input leaves out what the cache read and wrote, the
 * daemon's counts all of it, the read part as cached. */
export declare function bedrockCounted(fields: unknown, names: Names): Usage | null;
/** Usage from Converse's `usage` (or a ConverseStream `metadata` event's). */
export declare function converseUsage(parsed: unknown): Usage | null;
/** Usage from the `amazon-bedrock-invocationMetrics` of InvokeModel's last stream chunk. */
export declare function metricsUsage(chunk: unknown): Usage | null;
/** Usage from InvokeModel's token-count headers (names in any case). */
export declare function headersUsage(headers: Record<string, unknown> | undefined): Usage | null;
/** The status an exception inside a stream stands for (null: one not known, the stream's own). */
export declare function streamErrorStatus(name: string): number | null;
/** Limits a `BedrockRuntimeClient`'s model calls with llmctl and returns it. */
export declare function limit<T extends AwsClientLike>(awsClient: T, options: AwsLimitOptions): T;
export {};
