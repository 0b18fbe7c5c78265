package io.queen.timers.http.api;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Refuses a browser's cross-site request to a route that changes state (every method but GET and HEAD: the writes,
 * replay and drop, the console's forms), by the headers browsers set themselves and a page cannot forge: Go's
 * {@code net/http.CrossOriginProtection} (Go 1.25), rule for rule. {@code Sec-Fetch-Site} (every current browser) must
 * be {@code same-origin} or {@code none} (typed in the address bar); without it, an {@code Origin} must name this
 * server's own host and port as the request's {@code Host} does; a request with neither is not a browser's (curl, a
 * service, a Kafka-minded client) and passes. The cookie's {@code SameSite=Strict} and the console's form token stay:
 * this also covers the routes that take no cookie, where the topic without auth needs no credential at all, and the
 * JSON routes a page can reach with a simple POST (replay takes its arguments in the query, so no preflight stops it).
 *
 * <p>PRICE: a page of another origin cannot call the API from a browser, even with a token (there is no CORS); and
 * behind a proxy that rewrites {@code Host}, a browser without {@code Sec-Fetch-Site} (Safari before 16.4) is refused
 * on the console's forms: let the proxy pass {@code Host} through.
 */
public final class CrossSite {

    private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS");

    private CrossSite() {}

    /** Why {@code method} with the request's {@code header} values (the first of each name) is refused as cross-site; empty when it may go on. */
    public static Optional<String> refusal(String method, Function<String, String> header) {
        if (SAFE.contains(method)) {
            return Optional.empty();
        }
        String site = header.apply("Sec-Fetch-Site");
        if (site != null) {
            String s = site.trim().toLowerCase(Locale.ROOT);
            return s.equals("same-origin") || s.equals("none") ? Optional.empty()
                    : Optional.of("a " + (s.equals("same-site") ? "same-site" : "cross-site") + " request (Sec-Fetch-Site) may not change"
                            + " anything here: send it from this server's own origin, or not from a browser");
        }
        String origin = header.apply("Origin");
        if (origin == null) {
            return Optional.empty();
        }
        String host = header.apply("Host");
        if (host != null && host.trim().equalsIgnoreCase(authority(origin))) {
            return Optional.empty();
        }
        return Optional.of("a request from another origin (Origin is not this server's Host) may not change anything here");
    }

    /** host[:port] of an Origin header, as a Host header writes it; "" for "null" or anything that is not an origin. */
    private static String authority(String origin) {
        try {
            String a = new URI(origin.trim()).getRawAuthority();
            return a == null ? "" : a;
        } catch (URISyntaxException e) {
            return "";
        }
    }
}
