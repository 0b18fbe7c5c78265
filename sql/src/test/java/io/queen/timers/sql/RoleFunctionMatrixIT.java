package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.FreshDatabase.Login;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The role × function matrix, generated from the catalog (docs/schema-and-roles.md#the-role--function-matrix): every
 * function of the {@code queen} schema that a service role may execute ({@code has_function_privilege}) is called as a
 * login of each role, with arguments generated from its parameters' names and types: the attacker's own tenant, group
 * and topic, another tenant's (the victim's) keys, group and topic, rows claimed by somebody else, and hostile bounds.
 * Before and after every call the victim's state is read back (its timers, audit events, offsets, sealed patterns,
 * topic and group bindings, dead letters, whether its clear timer would fire, and the audit relay's lease) and must not
 * have changed; a call naming the victim must be refused with 42501 unless the function's reach is declared below.
 *
 * <p>A function granted later is covered without a line written here, as long as its parameters are ones this test can
 * generate; a parameter it cannot (a new name or type) fails the test, naming the function and the parameter, so a new
 * signature brings its generator rather than a silent skip.
 */
class RoleFunctionMatrixIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final UUID VICTIM = UUID.fromString("00000000-0000-0000-0000-00000000000a");
    static final UUID ATTACKER = UUID.fromString("00000000-0000-0000-0000-00000000000b");
    static final String VICTIM_GROUP = "mx-victim";
    static final String ATTACKER_GROUP = "mx-attacker";
    static final String VICTIM_TOPIC = "mx-victim-commands";
    static final String ATTACKER_TOPIC = "mx-attacker-commands";
    /** The victim's timer held by a sweeper (the fixture's claim): its token is nobody else's. */
    static final UUID VICTIM_CLAIM = UUID.fromString("0000000c-0000-4000-8000-00000000000a");
    /** The running relay's lease (the fixture's): its token is nobody else's. */
    static final UUID RELAY_LEASE = UUID.fromString("0000000e-0000-4000-8000-00000000000e");
    static final UUID VICTIM_DEAD_LETTER = UUID.fromString("0000000d-0000-4000-8000-00000000000a");
    static final String SERVICE_ROLES = "('queen_bridge'), ('queen_sweeper'), ('queen_operator')";

    /** Refusals a function documents (docs/schema-and-roles.md): anything else is a broken generator or function. */
    static final Map<String, String> REFUSALS = Map.of(
            "42501", "not this login's: privilege, binding, claim or lease",
            "22023", "beyond the owner's bounds, or a malformed call",
            "55000", "an offset moved backwards without replay",
            "40001", "a batch folded on a stale owner view",
            "P0002", "no such dead letter",
            "22003", "a hostile count beyond the integer a function computes with");

    /**
     * Functions that reach every tenant by design, each with the reason (docs/schema-and-roles.md#database-roles). A call
     * naming the victim may succeed; the victim's state still may not change, except where {@link Reach#AUDITED}: then
     * only with an audit event naming the caller's login (to the tenant the change belongs to).
     */
    static final Map<String, Reach> DECLARED = Map.of(
            "timer_list_v2", Reach.EVERY_TENANT, "timer_peek_v2", Reach.EVERY_TENANT,
            "timer_series_v1", Reach.EVERY_TENANT, "timer_dead_letters_v1", Reach.EVERY_TENANT,
            // the operator is every tenant's operator (the CLI; the HTTP API checks the caller's tenant before it calls)
            "bridge_offset_set_v2", Reach.AUDITED, "timer_dead_letter_remove_v1", Reach.AUDITED);

    enum Reach {
        /** The default: the tenants come from the owner's binding of the login, the claim it holds, or the lease. */
        BINDING,
        /**
         * Not SECURITY DEFINER (read from the catalog, not declared): it runs with the caller's rights, which write no
         * table, so any documented refusal holds the line (Queen's own log functions, PUBLIC's).
         */
        CALLER_RIGHTS,
        /** Reads every tenant's rows (the operator's). */
        EVERY_TENANT,
        /** Changes any tenant's state, always with an audit event naming the login (the operator's). */
        AUDITED
    }

    /**
     * What an argument stands for: the caller's own; the victim's (its tenant, group, topic, rows, dead letter,
     * partition); a name that is the victim's only beside the victim's tenant (a queue, a key: under the caller's own
     * tenant it is the caller's); a victim's row claimed by somebody else; a hostile bound.
     */
    enum Side { OWN, VICTIM, VICTIM_NAME, FOREIGN_CLAIM, HOSTILE_BOUND }

    record Value(String sql, Side side) {}

    /** The arranged fixture's ids that a value may name. */
    record Fixture(long victimEvent, UUID victimPartition) {}

    static final Map<String, Function<Fixture, List<Value>>> GENERATORS = generators();

    static Login bridgeA;
    static Login bridgeB;
    static Login sweeper;
    static Login operator;
    static UUID victimPartition;

    @BeforeAll
    static void tenantsAndLogins() throws SQLException {
        bridgeA = db.login("mx_bridge_a", "queen_bridge");
        bridgeB = db.login("mx_bridge_b", "queen_bridge");
        sweeper = db.login("mx_sweeper", "queen_sweeper");
        operator = db.login("mx_operator", "queen_operator");
        BridgeGroups.bind(db.dataSource(), VICTIM_GROUP, bridgeA.name(), Map.of(VICTIM_TOPIC, VICTIM));
        BridgeGroups.bind(db.dataSource(), ATTACKER_GROUP, bridgeB.name(), Map.of(ATTACKER_TOPIC, ATTACKER));
        victimPartition = UUID.fromString(text("SELECT partition_id::text FROM queen.log_provision_v1(ARRAY['" + VICTIM
                + "']::uuid[], ARRAY['a.q'], ARRAY['Default'])"));
    }

    @Test
    void everyFunctionARoleMayCallLeavesAnotherTenantAsItWas() throws SQLException {
        Map<String, List<String>> functions = grantedFunctions();
        Set<String> callerRights = callerRights();
        assertThat(functions.keySet()).as("the catalog lists the services' functions")
                .anyMatch(f -> f.startsWith("queen.bridge_apply_v4(")).anyMatch(f -> f.startsWith("queen.timer_fire_v3("));
        List<String> missing = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        int calls = 0;
        Map<Login, String> roles = Map.of(bridgeB, "queen_bridge", sweeper, "queen_sweeper", operator, "queen_operator");
        try (Connection b = db.connect(bridgeB); Connection s = db.connect(sweeper); Connection o = db.connect(operator)) {
            Map<Login, Connection> logins = Map.of(bridgeB, b, sweeper, s, operator, o);
            for (Connection c : logins.values()) {
                execute(c, "SET statement_timeout = '20s'");
            }
            for (Map.Entry<String, List<String>> f : functions.entrySet()) {
                String signature = f.getKey();
                String function = signature.substring(0, signature.indexOf('('));
                List<String> params = f.getValue();
                List<String> unknown = params.stream().filter(p -> !GENERATORS.containsKey(p)).toList();
                if (!unknown.isEmpty()) {
                    missing.add(signature + " " + unknown);
                    continue;
                }
                Reach reach = callerRights.contains(signature) ? Reach.CALLER_RIGHTS
                        : DECLARED.getOrDefault(function.substring("queen.".length()), Reach.BINDING);
                for (Map.Entry<Login, Connection> l : logins.entrySet()) {
                    boolean granted = !strings("SELECT 1 WHERE has_function_privilege('" + roles.get(l.getKey()) + "', '" + signature
                            + "', 'EXECUTE')").isEmpty();
                    // a role the function is not granted to is refused before any argument counts: one call says so
                    int n = granted ? calls(function, params, arrange()).size() : 1;
                    for (int i = 0; i < n; i++) {
                        Call call = calls(function, params, arrange()).get(i);
                        calls++;
                        String failure = check(l.getKey(), l.getValue(), granted, reach, call);
                        if (failure != null) {
                            failures.add(failure);
                        }
                    }
                }
            }
        }
        assertThat(missing).as("granted functions with a parameter no generator covers: add one to GENERATORS").isEmpty();
        assertThat(failures).as("of " + calls + " calls").isEmpty();
    }

    /** One generated call: its SQL and the sides its arguments stand for. */
    record Call(String sql, Set<Side> sides) {}

    /**
     * The calls of one function: all arguments the caller's own; then each argument in turn at each of its other values,
     * the others its own; then every argument that can name the victim naming it at once.
     */
    static List<Call> calls(String function, List<String> params, Fixture fixture) {
        List<List<Value>> values = params.stream().map(p -> GENERATORS.get(p).apply(fixture)).toList();
        List<Call> out = new ArrayList<>();
        out.add(call(function, values.stream().map(v -> v.get(0)).toList()));
        for (int i = 0; i < params.size(); i++) {
            for (Value v : values.get(i).subList(1, values.get(i).size())) {
                List<Value> args = new ArrayList<>(values.stream().map(x -> x.get(0)).toList());
                args.set(i, v);
                out.add(call(function, args));
            }
        }
        if (values.stream().filter(v -> v.stream().anyMatch(x -> victims(x.side()))).count() > 1) {
            out.add(call(function, values.stream()
                    .map(v -> v.stream().filter(x -> victims(x.side())).findFirst().orElse(v.get(0))).toList()));
        }
        return out;
    }

    static boolean victims(Side side) {
        return side == Side.VICTIM || side == Side.VICTIM_NAME;
    }

    static Call call(String function, List<Value> args) {
        Set<Side> sides = EnumSet.noneOf(Side.class);
        args.forEach(a -> sides.add(a.side()));
        return new Call("SELECT count(*) FROM " + function + "(" + args.stream().map(Value::sql).collect(Collectors.joining(", ")) + ")", sides);
    }

    /** Calls as {@code login}; returns what went wrong, or null. */
    static String check(Login login, Connection c, boolean granted, Reach reach, Call call) throws SQLException {
        List<String> before = victimState();
        String audited = "SELECT count(*)::text FROM queen.timer_audit_outbox WHERE event->>'by' LIKE '" + login.name() + "@%'";
        String auditedBefore = text(audited);
        String state = null;
        try (Statement st = c.createStatement()) {
            st.execute(call.sql());
        } catch (SQLException e) {
            state = e.getSQLState();
            if (!REFUSALS.containsKey(state)) {
                return login.name() + ": " + call.sql() + " failed with " + state + " (not a documented refusal): " + e.getMessage();
            }
        }
        List<String> after = victimState();
        String who = login.name() + (granted ? "" : " (not granted)") + ": " + call.sql();
        if (!granted && !"42501".equals(state)) {
            return who + " was not refused with 42501 but " + state;
        }
        if (granted && reach == Reach.BINDING && call.sides().contains(Side.VICTIM) && !"42501".equals(state)) {
            return who + " names the victim and was " + (state == null ? "accepted" : "refused with " + state) + ", not refused with 42501";
        }
        if (!after.equals(before)) {
            List<String> gone = new ArrayList<>(before);
            gone.removeAll(after);
            List<String> added = new ArrayList<>(after);
            added.removeAll(before);
            if (reach != Reach.AUDITED || text(audited).equals(auditedBefore)) {
                return who + " changed the victim's state: gone " + gone + ", added " + added;
            }
        }
        return null;
    }

    /** The functions of the queen schema that run with their caller's rights (not SECURITY DEFINER), by signature. */
    static Set<String> callerRights() throws SQLException {
        return Set.copyOf(strings("SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace AND NOT p.prosecdef"));
    }

    /** Every function of the queen schema a service role may execute, by signature, with its parameters as "name type". */
    static Map<String, List<String>> grantedFunctions() throws SQLException {
        Map<String, List<String>> out = new LinkedHashMap<>();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("""
                SELECT DISTINCT p.oid::regprocedure::text AS sig,
                       array(SELECT coalesce(p.proargnames[i], '$' || i) || ' ' || format_type(p.proargtypes[i - 1], NULL)
                               FROM generate_series(1, p.pronargs) AS i ORDER BY i) AS params
                  FROM pg_proc p, (VALUES %s) AS r(role)
                 WHERE p.pronamespace = 'queen'::regnamespace AND has_function_privilege(r.role, p.oid, 'EXECUTE')
                 ORDER BY 1""".formatted(SERVICE_ROLES))) {
            while (rs.next()) {
                out.put(rs.getString("sig"), List.of((String[]) rs.getArray("params").getArray()));
            }
        }
        return out;
    }

    /**
     * The two tenants as they were before any call: the victim's pending timer, its timer held by a sweeper's claim, an
     * unpublished audit event, a stored offset, a sealed pattern and a dead letter; the attacker's due timer and its own of
     * each. Every call starts from it.
     */
    static Fixture arrange() throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute("""
                    DELETE FROM queen.log_timers WHERE tenant_id IN ('%1$s', '%2$s');
                    DELETE FROM queen.timer_audit_outbox WHERE tenant_id IN ('%1$s', '%2$s');
                    DELETE FROM queen.bridge_offsets WHERE group_id IN ('%3$s', '%4$s') OR topic IN ('%5$s', '%6$s');
                    DELETE FROM queen.bridge_sealed_queues WHERE group_id IN ('%3$s', '%4$s');
                    DELETE FROM queen.log_dlq WHERE id IN (SELECT dlq_id FROM queen.timer_dlq_keys WHERE tenant_id IN ('%1$s', '%2$s'));
                    DELETE FROM queen.timer_dlq_keys WHERE tenant_id IN ('%1$s', '%2$s');
                    DELETE FROM queen.timer_audit_reads;
                    DELETE FROM queen.bridge_topics WHERE topic IN ('%5$s', '%6$s') OR group_id IN ('%3$s', '%4$s');
                    DELETE FROM queen.bridge_groups WHERE group_id IN ('%3$s', '%4$s');
                    INSERT INTO queen.bridge_groups (group_id, login, bound_by) VALUES ('%3$s', '%7$s', 'owner'), ('%4$s', '%8$s', 'owner');
                    INSERT INTO queen.bridge_topics (group_id, topic, tenant_id, bound_by)
                    VALUES ('%3$s', '%5$s', '%1$s', 'owner'), ('%4$s', '%6$s', '%2$s', 'owner');
                    INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload, claim_token, claimed_until)
                    VALUES ('%1$s', 'a.q', 'pending', now() + interval '1 hour', 'txn-a1', queen.timer_uuidv7_v1(now()), '\\x7b7d', NULL, NULL),
                           ('%1$s', 'a.q', 'held', now() - interval '1 second', 'txn-a2', queen.timer_uuidv7_v1(now()), '\\x7b7d',
                            '%9$s', now() + interval '10 minutes'),
                           ('%2$s', 'b.q', 'due', now() - interval '1 second', 'txn-b1', queen.timer_uuidv7_v1(now()), '\\x7b7d', NULL, NULL);
                    INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event)
                    VALUES ('%1$s', 'a.q/pending', 'scheduled', '{}'), ('%2$s', 'b.q/due', 'scheduled', '{}');
                    INSERT INTO queen.bridge_offsets (group_id, topic, "partition", next_offset) VALUES ('%3$s', '%5$s', 0, 5), ('%4$s', '%6$s', 0, 5);
                    INSERT INTO queen.bridge_sealed_queues (group_id, patterns) VALUES ('%3$s', ARRAY['a.secret%%']), ('%4$s', ARRAY['b.secret%%']);
                    INSERT INTO queen.log_dlq (id, partition_id, consumer_group, "offset", transaction_id, error)
                    VALUES ('%10$s', '%11$s', '__timer__', 0, 'txn-a0', 'boom');
                    INSERT INTO queen.timer_dlq_keys (dlq_id, tenant_id, queue, timer_key) VALUES ('%10$s', '%1$s', 'a.q', 'dead');
                    """.formatted(VICTIM, ATTACKER, VICTIM_GROUP, ATTACKER_GROUP, VICTIM_TOPIC, ATTACKER_TOPIC, bridgeA.name(),
                    bridgeB.name(), VICTIM_CLAIM, VICTIM_DEAD_LETTER, victimPartition));
            // the audit relay that runs now holds the lease (where the schema has one)
            st.execute("""
                    DO $$ BEGIN
                        IF to_regclass('queen.timer_audit_relay_lease') IS NOT NULL THEN
                            DELETE FROM queen.timer_audit_relay_lease;
                            INSERT INTO queen.timer_audit_relay_lease (one, token, holder, expires_at)
                            VALUES (TRUE, '%s', 'the relay', now() + interval '1 minute');
                        END IF;
                    END $$""".formatted(RELAY_LEASE));
        }
        return new Fixture(Long.parseLong(text("SELECT id::text FROM queen.timer_audit_outbox WHERE tenant_id = '" + VICTIM + "'")),
                victimPartition);
    }

    /**
     * What the victim sees of the database: its rows in every table a service writes, the relay's lease, and what the fire
     * would do with its clear timer now (fired, or refused as sealed: run in a transaction that is rolled back).
     */
    static List<String> victimState() throws SQLException {
        List<String> state = strings("""
                SELECT 'timer ' || row_to_json(t)::text FROM queen.log_timers t WHERE t.tenant_id = '%1$s'
                UNION ALL SELECT 'outbox ' || row_to_json(o)::text FROM queen.timer_audit_outbox o WHERE o.tenant_id = '%1$s'
                UNION ALL SELECT 'offset ' || row_to_json(b)::text FROM queen.bridge_offsets b WHERE b.group_id = '%2$s' OR b.topic = '%3$s'
                UNION ALL SELECT 'sealed ' || row_to_json(s)::text FROM queen.bridge_sealed_queues s WHERE s.group_id = '%2$s'
                UNION ALL SELECT 'topic ' || row_to_json(b)::text FROM queen.bridge_topics b
                           WHERE b.group_id = '%2$s' OR b.topic = '%3$s' OR b.tenant_id = '%1$s'
                UNION ALL SELECT 'group ' || row_to_json(g)::text FROM queen.bridge_groups g WHERE g.group_id = '%2$s'
                UNION ALL SELECT 'dead letter ' || row_to_json(k)::text FROM queen.timer_dlq_keys k WHERE k.tenant_id = '%1$s'
                UNION ALL SELECT 'dlq ' || row_to_json(d)::text FROM queen.log_dlq d WHERE d.partition_id = '%4$s'
                ORDER BY 1""".formatted(VICTIM, VICTIM_GROUP, VICTIM_TOPIC, victimPartition));
        if (!strings("SELECT 1 WHERE to_regclass('queen.timer_audit_relay_lease') IS NOT NULL").isEmpty()) {
            state.addAll(strings("SELECT 'relay lease ' || row_to_json(l)::text FROM queen.timer_audit_relay_lease l"));
        }
        state.add("the victim's clear timer " + fireProbe());
        return state;
    }

    /** The fire's verdict on the victim's clear pending timer, were it due and claimed now; rolled back. */
    static String fireProbe() throws SQLException {
        try (Connection c = db.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                int n = st.executeUpdate("UPDATE queen.log_timers SET deliver_at = now() - interval '1 second', claim_token = '" + VICTIM_CLAIM
                        + "', claimed_until = now() + interval '1 minute' WHERE tenant_id = '" + VICTIM + "' AND queue = 'a.q' AND timer_key = 'pending'");
                if (n == 0) {
                    return "is gone";
                }
                try (ResultSet rs = st.executeQuery("SELECT verdict FROM queen.timer_fire_v3('[{\"tenant_id\": \"" + VICTIM
                        + "\", \"queue\": \"a.q\", \"partition\": \"Default\", \"blob_length\": 1, \"timers\": [{\"timer_key\": \"pending\","
                        + " \"claim_token\": \"" + VICTIM_CLAIM + "\"}]}]'::jsonb, '\\x00'::bytea, decode(repeat('00', 16), 'hex'))")) {
                    rs.next();
                    return "would be " + rs.getString(1);
                }
            } finally {
                c.rollback();
            }
        }
    }

    /**
     * Values per parameter ("name type"): the first is the caller's own; the others name the victim, a victim's row claimed
     * by somebody else, or a hostile bound.
     */
    static Map<String, Function<Fixture, List<Value>>> generators() {
        Map<String, Function<Fixture, List<Value>>> g = new LinkedHashMap<>();
        String a = "'" + VICTIM + "'";
        String b = "'" + ATTACKER + "'";
        // who and what
        g.put("p_group text", f -> List.of(own("'" + ATTACKER_GROUP + "'"), victim("'" + VICTIM_GROUP + "'")));
        g.put("p_topic text", f -> List.of(own("'" + ATTACKER_TOPIC + "'"), victim("'" + VICTIM_TOPIC + "'")));
        g.put("p_topics text[]", f -> List.of(own("ARRAY['" + ATTACKER_TOPIC + "']"), victim("ARRAY['" + VICTIM_TOPIC + "']")));
        g.put("p_tenant uuid", f -> List.of(own(b + "::uuid"), victim(a + "::uuid"), bound("NULL::uuid")));
        for (String tenants : List.of("p_tenant uuid[]", "p_tenants uuid[]")) {
            g.put(tenants, f -> List.of(own("ARRAY[" + b + "]::uuid[]"), victim("ARRAY[" + a + "]::uuid[]"),
                    victim("ARRAY[" + b + ", " + a + "]::uuid[]")));
        }
        g.put("p_queue text", f -> List.of(own("'b.q'"), victimName("'a.q'")));
        g.put("p_queue text[]", f -> List.of(own("ARRAY['b.q']"), victimName("ARRAY['a.q', 'a.q']")));
        g.put("p_queues text[]", f -> List.of(own("ARRAY['b.q']"), victimName("ARRAY['a.q']")));
        g.put("p_key text[]", f -> List.of(own("ARRAY['due']"), victimName("ARRAY['pending', 'held']")));
        g.put("p_timer_key text", f -> List.of(own("'due'"), victimName("'pending'")));
        g.put("p_txn text", f -> List.of(own("'txn-b1'"), victimName("'txn-a1'")));
        g.put("p_after_key text", f -> List.of(own("NULL::text")));
        g.put("p_partition text", f -> List.of(own("'Default'")));
        g.put("p_partitions text[]", f -> List.of(own("ARRAY['Default']")));
        g.put("p_partition_id uuid", f -> List.of(own("'" + UUID.randomUUID() + "'::uuid"), victim("'" + f.victimPartition() + "'::uuid")));
        g.put("p_ids uuid[]", f -> List.of(own("'{}'::uuid[]"), victim("ARRAY['" + f.victimPartition() + "']::uuid[]")));
        g.put("p_id uuid", f -> List.of(own("'" + UUID.randomUUID() + "'::uuid"), victim("'" + VICTIM_DEAD_LETTER + "'::uuid")));
        // the bridge's batch
        g.put("p_offsets jsonb", f -> List.of(
                own(json("[{\"topic\": \"" + ATTACKER_TOPIC + "\", \"partition\": 0, \"expected\": 5, \"next\": 6}]")),
                victim(json("[{\"topic\": \"" + VICTIM_TOPIC + "\", \"partition\": 0, \"expected\": 5, \"next\": 1000}]")),
                victim(json("[{\"topic\": \"" + VICTIM_TOPIC + "\", \"partition\": 1, \"expected\": null, \"next\": 0}]"))));
        g.put("p_upserts jsonb", f -> List.of(own(json("[" + upsert(ATTACKER, "b.q", "new") + "]")),
                victim(json("[" + upsert(VICTIM, "a.q", "pending") + "]")), victim(json("[" + upsert(VICTIM, "a.q", "forged") + "]"))));
        g.put("p_deletes jsonb", f -> List.of(own(json("[" + delete(ATTACKER, "b.q", "due", false) + "]")),
                victim(json("[" + delete(VICTIM, "a.q", "pending", false) + "]")), victim(json("[" + delete(VICTIM, "a.q", "held", true) + "]"))));
        g.put("p_events jsonb", f -> List.of(own(json("[" + event(ATTACKER) + "]")), victim(json("[" + event(VICTIM) + "]"))));
        g.put("p_wake_within interval", f -> List.of(own("interval '1 second'"), bound("interval '100 years'")));
        g.put("p_patterns text[]", f -> List.of(own("ARRAY['b.secret%']"), bound("ARRAY['%']"), bound("'{}'::text[]")));
        g.put("p_partition integer", f -> List.of(own("0"), bound("2147483647")));
        g.put("p_offset bigint", f -> List.of(own("6"), bound("9223372036854775807")));
        g.put("p_position text", f -> List.of(own("'empty'"), bound("'latest'")));
        g.put("p_log_start bigint", f -> List.of(own("0")));
        g.put("p_log_end bigint", f -> List.of(own("0"), bound("9223372036854775807")));
        g.put("p_replay boolean", f -> List.of(own("false"), bound("true")));
        // counts and bounds
        for (String count : List.of("p_cap integer", "p_due_cap integer", "p_limit integer", "p_batch integer", "p_per_tenant integer",
                "p_rows integer", "p_events integer", "p_count integer")) {
            g.put(count, f -> List.of(own("10"), bound("2147483647")));
        }
        g.put("p_max_bytes bigint", f -> List.of(own("1000000"), bound("9223372036854775807")));
        g.put("p_lone_oversize boolean", f -> List.of(own("true")));
        g.put("p_budget jsonb", f -> List.of(own("NULL::jsonb"),
                bound(json("{\"near_ms\": 1000, \"allowance\": 0, \"tenants\": {\"" + VICTIM + "\": 0}}"))));
        g.put("p_lease interval", f -> List.of(own("interval '1 minute'"), bound("interval '100 years'")));
        g.put("p_transient boolean", f -> List.of(own("false"), bound("true")));
        g.put("p_transient_backoff interval", f -> List.of(own("interval '1 second'"), bound("interval '100 years'")));
        g.put("p_backoff_base interval", f -> List.of(own("interval '1 second'"), bound("interval '100 years'")));
        g.put("p_backoff_max interval", f -> List.of(own("interval '1 minute'"), bound("interval '100 years'")));
        g.put("p_max_attempts integer", f -> List.of(own("5"), bound("1")));
        g.put("p_cutoff timestamp with time zone", f -> List.of(own("now() - interval '1 day'"), bound("now() + interval '100 years'")));
        g.put("p_error text", f -> List.of(own("'matrix'")));
        // the sweeper's claimed rows: its own due timer under a token it made up, the victim's timer another sweeper holds
        g.put("p_timers jsonb", f -> List.of(own(json("[" + claimed(ATTACKER, "b.q", "due", UUID.randomUUID()) + "]")),
                foreignClaim(json("[" + claimed(VICTIM, "a.q", "held", UUID.randomUUID()) + "]"))));
        g.put("p_segments jsonb", f -> List.of(own(json("[" + segment(ATTACKER, "b.q", "due", UUID.randomUUID()) + "]")),
                foreignClaim(json("[" + segment(VICTIM, "a.q", "held", UUID.randomUUID()) + "]"))));
        g.put("p_blobs bytea", f -> List.of(own("'\\x00'::bytea")));
        g.put("p_blob bytea", f -> List.of(own("'\\x00'::bytea")));
        g.put("p_hashes bytea", f -> List.of(own("decode(repeat('00', 16), 'hex')")));
        g.put("p_trace bytea", f -> List.of(own("'\\x00'::bytea")));
        // the audit relay's: the lease and the read's token are secrets of the relay that holds them
        g.put("p_held_tenants uuid[]", f -> List.of(own("'{}'::uuid[]"), bound("ARRAY[" + b + "]::uuid[]")));
        g.put("p_token uuid", f -> List.of(own("'" + UUID.randomUUID() + "'::uuid"), bound("NULL::uuid")));
        g.put("p_lease uuid", f -> List.of(own("'" + UUID.randomUUID() + "'::uuid"), bound("NULL::uuid")));
        g.put("p_ids bigint[]", f -> List.of(own("'{}'::bigint[]"), foreignClaim("ARRAY[" + f.victimEvent() + "]::bigint[]")));
        // the operator's
        g.put("p_how text", f -> List.of(own("'dropped'"), bound("'replayed'")));
        g.put("p_reason text", f -> List.of(own("'matrix'")));
        g.put("p_txn_hash bytea", f -> List.of(own("NULL::bytea")));
        g.put("p_verdict_event uuid", f -> List.of(own("NULL::uuid")));
        g.put("p_trace_id text", f -> List.of(own("NULL::text")));
        g.put("p_span_id text", f -> List.of(own("NULL::text")));
        g.put("p_client_label text", f -> List.of(own("'matrix'")));
        return g;
    }

    static Value own(String sql) {
        return new Value(sql, Side.OWN);
    }

    static Value victim(String sql) {
        return new Value(sql, Side.VICTIM);
    }

    static Value victimName(String sql) {
        return new Value(sql, Side.VICTIM_NAME);
    }

    static Value foreignClaim(String sql) {
        return new Value(sql, Side.FOREIGN_CLAIM);
    }

    static Value bound(String sql) {
        return new Value(sql, Side.HOSTILE_BOUND);
    }

    static String json(String text) {
        return "'" + text.replace("'", "''") + "'::jsonb";
    }

    static String upsert(UUID tenant, String queue, String key) {
        return """
                {"tenant_id": "%s", "queue": "%s", "timer_key": "%s", "partition": "Default", "deliver_at_ms": 0, "txn": "forged",
                 "message_id": "%s", "payload": "e30=", "payload_zstd": false, "encrypted": false, "producer_sub": null, "trace_context": null}"""
                .formatted(tenant, queue, key, MessageIds.v7());
    }

    static String delete(UUID tenant, String queue, String key, boolean stopSeries) {
        return "{\"tenant_id\": \"%s\", \"queue\": \"%s\", \"timer_key\": \"%s\", \"stop_series\": %s}".formatted(tenant, queue, key, stopSeries);
    }

    static String event(UUID tenant) {
        return "{\"tenant_id\": \"%s\", \"kafka_key\": \"forged\", \"type\": \"cancelled\", \"event\": {\"forged\": true}}".formatted(tenant);
    }

    static String claimed(UUID tenant, String queue, String key, UUID token) {
        return ("{\"tenant_id\": \"%s\", \"queue\": \"%s\", \"timer_key\": \"%s\", \"claim_token\": \"%s\", \"plan\": null,"
                + " \"payload\": \"e30=\"}").formatted(tenant, queue, key, token);
    }

    static String segment(UUID tenant, String queue, String key, UUID token) {
        return ("{\"tenant_id\": \"%s\", \"queue\": \"%s\", \"partition\": \"Default\", \"blob_length\": 1,"
                + " \"timers\": [{\"timer_key\": \"%s\", \"claim_token\": \"%s\"}]}").formatted(tenant, queue, key, token);
    }

    static void execute(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static String text(String sql) throws SQLException {
        List<String> out = strings(sql);
        return out.isEmpty() ? null : out.get(0);
    }

    static List<String> strings(String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(sql); ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }
}
