package io.queen.timers.http.api;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * One request and its answer, as the routes and the console read and write them: the raw path and query (a key is
 * opaque, so nothing is decoded before the route does), the request's headers, its body once read whole (see
 * {@link ApiServer}: read without holding a thread), and one answer, written whole. Jetty's {@link Request},
 * {@link Response} and {@link Callback} stay behind it: the routes never see the server.
 */
public final class Exchange {

    private final Request request;
    private final Response response;
    private final Callback callback;
    private final AtomicBoolean answered = new AtomicBoolean();
    private byte[] body = new byte[0];
    private volatile Runnable beforeAnswer = () -> { };

    Exchange(Request request, Response response, Callback callback) {
        this.request = request;
        this.response = response;
        this.callback = callback;
    }

    /** The path as sent, still percent-encoded. */
    public String path() {
        String p = request.getHttpURI().getPath();
        return p == null ? "" : p;
    }

    /** The query as sent, still percent-encoded; null without one. */
    public String rawQuery() {
        return request.getHttpURI().getQuery();
    }

    public String method() {
        return request.getMethod();
    }

    /** The first value of the request header {@code name}; null without it. */
    public String header(String name) {
        return request.getHeaders().get(name);
    }

    /** Every value of the request header {@code name}, in order (each header line one value). */
    public List<String> headers(String name) {
        return request.getHeaders().getValuesList(name);
    }

    /** The caller's address as text; "?" when the socket has none. */
    public String remoteAddress() {
        SocketAddress a = request.getConnectionMetaData().getRemoteSocketAddress();
        return a instanceof InetSocketAddress i && i.getAddress() != null ? i.getAddress().getHostAddress() : "?";
    }

    /** Whether this connection is TLS to this server. */
    public boolean secure() {
        return request.isSecure();
    }

    /** The body, read whole before the route runs; empty for a request the server reads none of. */
    public byte[] body() {
        return body;
    }

    void body(byte[] body) {
        this.body = body;
    }

    public void setHeader(String name, String value) {
        response.getHeaders().put(name, value);
    }

    public void addHeader(String name, String value) {
        response.getHeaders().add(name, value);
    }

    /**
     * Runs {@code r} once, just before the answer is written (or the exchange aborted): what the request held (its
     * tenant's share) is given back before the client can see the answer and send its next request.
     */
    void beforeAnswer(Runnable r) {
        this.beforeAnswer = r;
    }

    /** Whether an answer was begun: a second one is dropped. */
    public boolean answered() {
        return answered.get();
    }

    /** Answers {@code status} with {@code body}; written without blocking (a client that does not take it is cut at the idle timeout). */
    public void send(int status, String type, byte[] body) {
        if (!answered.compareAndSet(false, true)) {
            return;
        }
        beforeAnswer.run();
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    /** Answers {@code status} without a body (a redirect). */
    public void sendEmpty(int status) {
        if (!answered.compareAndSet(false, true)) {
            return;
        }
        beforeAnswer.run();
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, 0);
        response.write(true, null, callback);
    }

    /** Ends the exchange without an answer: the connection is closed (a failure while the answer was being written). */
    void abort(Throwable why) {
        if (answered.compareAndSet(false, true)) {
            beforeAnswer.run();
            callback.failed(why);
        }
    }
}
