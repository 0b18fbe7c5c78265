package io.queen.timers.http.route;

import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.routes.TopicRoutes;
import io.queen.timers.routes.auth.AuthResult;
import io.queen.timers.routes.auth.TokenVerifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which command topic a request writes to, decided by its caller: the topic whose {@code topic.<name>.auth=jwt}
 * rules (the {@link TokenVerifier} and {@link TopicRoutes} the bridge verifies with too) verify the bearer token, or,
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

    /** The claim a token names its tenant with (the TokenVerifier reads the same, in the bridge too). */
    static final String TENANT_CLAIM = "tenant";
    /** A longer bearer is not read: the bridge refuses a queen-auth header above 16 KiB, and no token comes near it. */
    static final int MAX_TOKEN_CHARS = 16 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(CommandTopics.class);

    /** Sorted by topic: which topic a token is tried against first does not depend on a hash. */
    private final Map<String, TopicRoutes.Route> jwt = new TreeMap<>();
    private final Map<String, String> loggedProblems = new ConcurrentHashMap<>();
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
     * record written now. A token is verified against the keys of the one topic its own, still unverified, {@code iss},
     * {@code aud} and {@code tenant} name ({@link #candidates}), never against every topic's: what a token without a
     * {@code kid} costs is bounded by that topic's key file, not by every key this server holds.
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
        List<String> candidates = candidates(bearer);
        if (candidates.isEmpty()) {
            throw new Refused(401, jwt.size() == 1 ? "token not valid for this topic: it is not a signed JWT, or its iss or aud is"
                    + " not the topic's" : "the token is not valid here");
        }
        RecordHeaders h = new RecordHeaders();
        h.add(new RecordHeader(TokenVerifier.HEADER, bearer.getBytes(StandardCharsets.UTF_8)));
        AuthResult.Refused best = null;
        for (String topic : candidates) {
            TopicRoutes.Route route = jwt.get(topic);
            AuthResult a = route.auth().verify(h, nowMs, route.tenant());
            if (a instanceof AuthResult.Verified v) {
                return new Target(topic, route.tenant(), bearer, v.sub(), v.admin());
            }
            if (unreadableKeys(topic, route)) {
                continue; // the verifier's detail names the key file: that is for the server's log, not for a caller
            }
            AuthResult.Refused r = (AuthResult.Refused) a;
            if (best == null || r.reason() == RejectReason.FORBIDDEN) {
                best = r; // a token valid but for another tenant says more than a bad signature elsewhere
            }
        }
        if (best == null) {
            throw new Refused(401, "token refused: this server cannot read the topic's verification keys now (its log says why);"
                    + " retry later");
        }
        int status = best.reason() == RejectReason.FORBIDDEN ? 403 : 401;
        // with one jwt topic its detail is exactly what the bridge would say; with several, which topic refused how says
        // which tenants exist: only the kind is told
        throw new Refused(status, jwt.size() == 1 ? best.detail()
                : status == 403 ? "the token is not valid for any tenant this server writes for" : "the token is not valid here");
    }

    /**
     * The jwt topics {@code bearer} is verified against, read from its header and claims without any signature work: the
     * topics whose {@code auth.issuer} is its {@code iss} and whose {@code auth.audience} is in its {@code aud}; of those,
     * the one of the tenant its {@code tenant} claim names (one topic per tenant), or without the claim those that take a
     * token without one (auth.tenant.claim=optional). When none of them fits its tenant, one of them: that one check tells
     * a valid token of another tenant (403) from a forged one (401). Empty for a token that is not a signed JWT, or whose
     * issuer and audience no topic has. PRICE: topics with auth.tenant.claim=optional that share an issuer and an
     * audience are each tried with a token without the claim, as the bridge would accept it on any of them.
     */
    List<String> candidates(String bearer) {
        if (bearer.length() > MAX_TOKEN_CHARS) {
            return List.of();
        }
        JWTClaimsSet claims;
        try {
            claims = SignedJWT.parse(bearer).getJWTClaimsSet();
        } catch (java.text.ParseException | RuntimeException e) {
            return List.of();
        }
        List<String> fitting = new ArrayList<>();
        for (Map.Entry<String, TopicRoutes.Route> e : jwt.entrySet()) {
            TokenVerifier.Rules rules = e.getValue().auth().rules();
            if (rules.claims().issuer().equals(claims.getIssuer()) && claims.getAudience() != null && claims.getAudience().contains(rules.claims().audience())) {
                fitting.add(e.getKey());
            }
        }
        if (fitting.isEmpty()) {
            return List.of();
        }
        Object tenant = claims.getClaims().get(TENANT_CLAIM);
        List<String> own = fitting.stream().filter(t -> tenant == null
                ? jwt.get(t).auth().rules().claims().tenantClaim() == TokenVerifier.TenantClaim.OPTIONAL
                : tenant instanceof String named && sameTenant(named, jwt.get(t).tenant())).toList();
        return own.isEmpty() ? List.of(fitting.get(0)) : own;
    }

    /** Whether the topic's key file is unreadable now; the first time each problem is seen, the log says which file and why. */
    private boolean unreadableKeys(String topic, TopicRoutes.Route route) {
        Optional<String> problem = route.auth().keysProblem();
        if (problem.isEmpty()) {
            loggedProblems.remove(topic);
            return false;
        }
        if (!problem.get().equals(loggedProblems.put(topic, problem.get()))) {
            LOG.warn("tokens of command topic {} are refused: {}", topic, problem.get());
        }
        return true;
    }

    private static boolean sameTenant(String claimed, UUID tenant) {
        try {
            return UUID.fromString(claimed.trim()).equals(tenant);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
