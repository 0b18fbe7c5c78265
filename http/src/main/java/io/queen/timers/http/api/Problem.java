package io.queen.timers.http.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * An error answer as RFC 9457 {@code application/problem+json}: {@code type} (a stable URI per kind, relative to the
 * API, listed in openapi.yaml), {@code title}, {@code status}, {@code detail}. Details name the request's own
 * mistake, never another tenant, key or internal address.
 */
public record Problem(int status, String kind, String title, String detail) {

    public static final String MEDIA_TYPE = "application/problem+json";
    static final String TYPE_PREFIX = "/problems/";

    public static Problem badRequest(String detail) {
        return new Problem(400, "bad-request", "The request is not a valid command request", detail);
    }

    public static Problem tooLarge(String detail) {
        return new Problem(413, "too-large", "The request is too large", detail);
    }

    public static Problem unauthorized(int status, String detail) {
        return status == 403 ? new Problem(403, "forbidden", "The token may not write here", detail)
                : new Problem(401, "unauthorized", "No valid token", detail);
    }

    /** A browser's request from another site to a route that changes state ({@link CrossSite}). */
    public static Problem crossSite(String detail) {
        return new Problem(403, "cross-site", "Cross-site request refused", detail);
    }

    public static Problem notFound(String detail) {
        return new Problem(404, "not-found", "No such route", detail);
    }

    /** A timer, dead letter or other resource the caller's tenant does not have (another tenant's is answered so too). */
    public static Problem absent(String detail) {
        return new Problem(404, "not-found", "Not found", detail);
    }

    /** The state of the resource refuses the request (a dead letter that cannot be replayed as it is). */
    public static Problem conflict(String detail) {
        return new Problem(409, "conflict", "Refused by the resource's state", detail);
    }

    public static Problem methodNotAllowed(String detail) {
        return new Problem(405, "method-not-allowed", "Method not allowed", detail);
    }

    public static Problem unsupportedMediaType(String detail) {
        return new Problem(415, "unsupported-media-type", "The body must be application/json", detail);
    }

    public static Problem tooManyRequests(String detail) {
        return new Problem(429, "rate-limited", "Too many requests", detail);
    }

    /**
     * The caller's tenant already has api.senders requests in progress (reads and writes together), its share of the
     * server: answered at once (with Retry-After), nothing read or written.
     */
    public static Problem tenantBusy() {
        return new Problem(429, "rate-limited", "Too many requests", "this tenant already has api.senders requests in progress (reads"
                + " and writes together), its share of the server: nothing was read or written; retry after Retry-After (writes wait"
                + " long while the bridge is behind on the tenant's topic)");
    }

    /** The body did not arrive whole within api.request.timeout: nothing was written, and the connection is closed. */
    public static Problem requestTimeout(String detail) {
        return new Problem(408, "timeout", "The request took too long to arrive", detail);
    }

    /** Every worker is busy and the queue for them is full: nothing was read or written (with Retry-After). */
    public static Problem serverBusy() {
        return new Problem(503, "unavailable", "The server is busy", "every one of api.threads is working and " + ApiServer.QUEUE
                + " more requests wait for one: nothing was read or written; retry after Retry-After");
    }

    public static Problem unavailable(String detail) {
        return new Problem(503, "unavailable", "The commands could not be written", detail);
    }

    byte[] json(ObjectMapper json) {
        ObjectNode n = json.createObjectNode();
        n.put("type", TYPE_PREFIX + kind);
        n.put("title", title);
        n.put("status", status);
        n.put("detail", detail);
        try {
            return json.writeValueAsBytes(n);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
