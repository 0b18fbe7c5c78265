package io.queen.timers.bridge.apply;

import io.queen.timers.bridge.wire.Parsed;
import java.util.UUID;

/**
 * One consumed record, parsed, with its topic's tenant, its producer sub (the topic's fixed one, or its verified token's sub)
 * and what that producer may act on (docs/security.md#producer-identity).
 */
public record Incoming(Source source, UUID tenant, String producerSub, Authority authority, Parsed parsed) {

    /**
     * Which staged timers of its tenant a record may reschedule or cancel (or schedule over).
     * <ul>
     *   <li>{@code TENANT}: any; a topic with auth=none, whose writers Kafka ACLs vouch for as the tenant, and no more.</li>
     *   <li>{@code OWNER}: a verified token's: only the keys its sub staged; another's is rejected not_owner.</li>
     *   <li>{@code ADMIN}: a verified token carrying the claim auth.admin.claim names: any key of its tenant.</li>
     * </ul>
     */
    public enum Authority { TENANT, OWNER, ADMIN }

    /** A record of a topic with auth=none (and the tests' records): it acts for its whole tenant. */
    public Incoming(Source source, UUID tenant, String producerSub, Parsed parsed) {
        this(source, tenant, producerSub, Authority.TENANT, parsed);
    }
}
