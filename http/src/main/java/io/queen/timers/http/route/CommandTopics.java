package io.queen.timers.http.route;

import io.queen.timers.bridge.TopicRoutes;
import io.queen.timers.bridge.auth.AuthResult;
import io.queen.timers.bridge.auth.TokenVerifier;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.core.config.ConfigException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Which command topic a request writes to, decided by its caller: the topic whose {@code topic.<name>.auth=jwt}
 * rules (the bridge's own {@link TokenVerifier}, the bridge's own {@link TopicRoutes}) verify the bearer token, or,
 * without a token, the one topic without auth. A tenant never comes from the request body or path. The token still
 * travels with every command ({@code queen-auth}) and the bridge verifies it again against the record's timestamp: this
 * check only turns a token no topic accepts into 401/403 instead of a rejected verdict per operation.
 */
public final class CommandTopics {

    /**
     * Where a request goes; {@code caller} keys its rate limit (the token's sub), null without a token. {@code admin}: the
     * token carries auth.admin.claim (acts on any key of its tenant), or the request came without a token to the topic
     * without auth, where anyone who reaches the API acts as its tenant.
     */
    public record Target(String topic, UUID tenant, String token, String caller, boolean admin) {}

    /** Why a request goes nowhere: {@code status} 401 or 403, {@code detail} safe to show (no other tenant is named). */
    public static final class Refused extends Exception {
        public final int status;

        Refused(int status, String detail) {
            super(detail, null, false, false);
            this.status = status;
        }
    }

    private final Map<String, TopicRoutes.Route> jwt = new HashMap<>();
    private final String open;
    private final UUID openTenant;

    /** @param served the API's topics (api.command.topics), empty for every command topic */
    public CommandTopics(TopicRoutes routes, List<String> served) {
        List<String> topics = served.isEmpty() ? new ArrayList<>(routes.tenants().keySet()) : served;
        Map<UUID, String> byTenant = new HashMap<>();
        String open = null;
        for (String t : topics) {
            if (!routes.routes().containsKey(t)) {
                throw new ConfigException("setting api.command.topics names topic '" + t + "', which is not in command.topics "
                        + routes.tenants().keySet());
            }
            TopicRoutes.Route r = routes.route(t);
            String other = byTenant.put(r.tenant(), t);
            if (other != null) {
                throw new ConfigException("command topics " + other + " and " + t + " both belong to tenant " + r.tenant()
                        + ": the API writes one topic per tenant; name one in api.command.topics");
            }
            if (r.auth() == null) {
                if (open != null) {
                    throw new ConfigException("command topics " + open + " and " + t + " both take commands without a token: a"
                            + " request without one could not say which it means; name one in api.command.topics");
                }
                open = t;
            } else {
                jwt.put(t, r);
            }
        }
        this.open = open;
        this.openTenant = open == null ? null : routes.route(open).tenant();
    }

    /**
     * The topic of a request with {@code bearer} (null: none), checked at {@code nowMs} as the bridge will check the
     * record written now.
     */
    public Target resolve(String bearer, long nowMs) throws Refused {
        if (bearer == null) {
            if (open == null) {
                throw new Refused(401, "a bearer token is required");
            }
            return new Target(open, openTenant, null, null, true);
        }
        if (jwt.isEmpty()) {
            // the open topic would drop the token unchecked: refuse rather than let a caller think it was verified
            throw new Refused(401, "this server's command topic takes no token; send the request without Authorization");
        }
        RecordHeaders h = new RecordHeaders();
        h.add(new RecordHeader(TokenVerifier.HEADER, bearer.getBytes(StandardCharsets.UTF_8)));
        AuthResult.Refused best = null;
        for (Map.Entry<String, TopicRoutes.Route> e : jwt.entrySet()) {
            AuthResult a = e.getValue().auth().verify(h, nowMs, e.getValue().tenant());
            if (a instanceof AuthResult.Verified v) {
                return new Target(e.getKey(), e.getValue().tenant(), bearer, v.sub(), v.admin());
            }
            AuthResult.Refused r = (AuthResult.Refused) a;
            if (best == null || r.reason() == RejectReason.FORBIDDEN) {
                best = r; // a token valid but for another tenant says more than a bad signature elsewhere
            }
        }
        int status = best.reason() == RejectReason.FORBIDDEN ? 403 : 401;
        // with one jwt topic its detail is exactly what the bridge would say; with several, which topic refused how says
        // which tenants exist: only the kind is told
        throw new Refused(status, jwt.size() == 1 ? best.detail()
                : status == 403 ? "the token is not valid for any tenant this server writes for" : "the token is not valid here");
    }
}
