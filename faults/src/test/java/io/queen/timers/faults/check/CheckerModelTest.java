package io.queen.timers.faults.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.faults.load.CommandKind;
import io.queen.timers.faults.load.Intent;
import io.queen.timers.processes.stack.Stack;
import io.queen.timers.faults.decode.DecodedFrame;
import io.queen.timers.log.codec.UuidV7;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The checker's model fed directly (no Kafka, no PostgreSQL): a clean history passes, and each kind of
 * broken history is caught as exactly the violation it is. Shows that the checks can fail.
 */
class CheckerModelTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Instant T = Instant.parse("2026-12-03T00:00:00Z");

    private final Intent[] intents = new Intent[100];
    private final Checker checker = new Checker(null, null, intents, Set.of(), Checker.CLOCK_SLACK_MS);
    private long offset;
    private long auditOffset;

    @Test
    void aMessageThatFiresOnceOnTimeWithItsLastPayloadIsClean() throws Exception {
        UUID m = schedule(0, "k", "{\"v\":1}", T);
        reschedule(0, "k", m, "{\"v\":2}", T.plusSeconds(1));
        fire(0, m, "{\"v\":2}", T.plusSeconds(2));
        assertThat(judge().clean()).as(judge().violations().toString()).isTrue();
    }

    @Test
    void aSecondFrameOfOneMessageIsADuplicate() throws Exception {
        UUID m = schedule(0, "k", "{\"v\":1}", T);
        fire(0, m, "{\"v\":1}", T.plusSeconds(1));
        fire(0, m, "{\"v\":1}", T.plusSeconds(2));
        assertThat(judge().count("duplicate fires")).isEqualTo(1);
    }

    @Test
    void aFrameWhoseMessageIdIsNotAUuidV7IsReported() throws Exception {
        // Issue 43: every id in the log is a UUIDv7; a version 4 id (gen_random_uuid()) was minted by another path.
        UUID v4 = UUID.fromString("2f1c7a4e-9b3d-4c2a-8e5f-0a1b2c3d4e5f");
        upsert(0, "k", v4, "{\"v\":1}", T, "scheduled");
        fire(0, v4, "{\"v\":1}", T.plusSeconds(1));
        assertThat(judge().count("message ids not UUIDv7")).isEqualTo(1);
        assertThat(judge().violations().entrySet().stream().filter(e -> e.getValue() > 0).map(java.util.Map.Entry::getKey))
                .containsExactly("message ids not UUIDv7");
    }

    @Test
    void aMessageWithoutAFrameACancelOrADlqRowIsLost() throws Exception {
        schedule(0, "k", "{\"v\":1}", T);
        assertThat(judge().count("losses")).isEqualTo(1);
    }

    @Test
    void aFrameBeforeItsDeliveryTimeIsEarly() throws Exception {
        UUID m = schedule(0, "k", "{\"v\":1}", T);
        fire(0, m, "{\"v\":1}", T.minusMillis(1));
        assertThat(judge().count("early fires")).isEqualTo(1);
    }

    @Test
    void aCancelledMessageMustNotFire() throws Exception {
        UUID m = schedule(0, "k", "{\"v\":1}", T);
        ObjectNode cancelled = event(0, "cancelled", "k").put("messageId", m.toString());
        checker.command(cmd(0, "k", null, null, null, CommandKind.VALID));
        checker.verdict(lastId(0), cancelled, pos());
        fire(0, m, "{\"v\":1}", T.plusSeconds(1));
        assertThat(judge().count("cancelled, then fired")).isEqualTo(1);
    }

    @Test
    void aFrameWithAnEarlierPayloadThanTheLastRescheduleIsWrong() throws Exception {
        UUID m = schedule(0, "k", "{\"v\":1}", T);
        reschedule(0, "k", m, "{\"v\":2}", T);
        fire(0, m, "{\"v\":1}", T.plusSeconds(1));
        assertThat(judge().count("fired with another payload or txn than its last schedule")).isEqualTo(1);
    }

    @Test
    void aMessageOfOneTenantInTheOtherTenantsQueueCrosses() throws Exception {
        UUID m = schedule(0, "k", "{\"v\":1}", T);
        fire(1, m, "{\"v\":1}", T.plusSeconds(1));
        // Twice: the frame in the other tenant's queue, and its fired event on the other tenant's audit topic.
        assertThat(judge().count("tenant crossings")).isEqualTo(2);
    }

    @Test
    void everyRecordNeedsExactlyOneVerdictAndHostileOnesARejection() throws Exception {
        checker.command(cmd(0, "k", null, null, null, CommandKind.HOSTILE));
        checker.verdict(lastId(0), event(0, "absent", "k"), pos());
        checker.command(cmd(0, "k2", null, null, null, CommandKind.VALID));
        checker.verdict(lastId(0), event(0, "absent", "k2"), pos());
        checker.verdict(lastId(0), event(0, "absent", "k2"), pos());
        checker.command(cmd(0, "k3", null, null, null, CommandKind.VALID));
        Findings f = judge();
        assertThat(f.count("hostile records not rejected")).isEqualTo(1);
        assertThat(f.count("records with 2+ verdicts (different eventId)")).isEqualTo(1);
        assertThat(f.count("records without a verdict")).isEqualTo(1);
    }

    @Test
    void aRescheduleWhoseFirstCopyCameAfterTheFiresFirstCopyIsNotAfterTheFire() throws Exception {
        // The outbox: scheduled M, rescheduled M, fired M (the fire carries the reschedule's txn). The relay's round
        // lost the batch with the reschedule (expired) while the fire's batch landed; the round went out again.
        UUID m = schedule(0, "k", "{\"v\":1}", T);
        checker.command(cmd(0, "k", "t-r", "{\"v\":2}", T.plusSeconds(1), CommandKind.VALID));
        String rescheduleId = lastId(0);
        ObjectNode rescheduled = event(0, "rescheduled", "k").put("messageId", m.toString()).put("txn", "t-r")
                .put("partition", "Default").put("deliverAt", T.plusSeconds(1).toString());
        lastTxn = "t-r";
        ObjectNode fired = JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", "fired").put("messageId", m.toString());
        checker.outcomeEvent(0, fired, pos());                  // the fire's batch of the failed round
        checker.verdict(rescheduleId, rescheduled, pos());      // the round again: the reschedule,
        checker.outcomeEvent(0, fired, pos());                  // then the fire's repeat
        DecodedFrame frame = DecodedFrame.of(m, "t-r", "{\"v\":2}".getBytes(StandardCharsets.UTF_8));
        frames.add(() -> checker.fire(0, "q", "Default", 0, T.plusSeconds(2), frame, "test"));
        assertThat(judge().clean()).as(judge().violations().toString()).isTrue();
    }

    @Test
    void aRescheduleAfterEveryCopyOfTheFireIsNotAllowed() throws Exception {
        UUID m = schedule(0, "k", "{\"v\":1}", T);
        fire(0, m, "{\"v\":1}", T.plusSeconds(1));
        reschedule(0, "k", m, "{\"v\":2}", T.plusSeconds(1));
        assertThat(judge().count("verdicts the semantics do not allow")).isEqualTo(1);
    }

    @Test
    void aNewMessageWhoseFirstCopyCameBeforeTheOldOnesFireIsAllowedWhenACopyFollowsTheFire() throws Exception {
        // The outbox: scheduled M, fired M, scheduled M2 (the timer was gone). The fire's batch was lost, the new
        // message's landed; the round went out again.
        UUID m = schedule(0, "k", "{\"v\":1}", T);
        UUID m2 = UuidV7.next();
        checker.command(cmd(0, "k", "t-2", "{\"v\":2}", T.plusSeconds(5), CommandKind.VALID));
        ObjectNode scheduled = event(0, "scheduled", "k").put("messageId", m2.toString()).put("txn", "t-2")
                .put("partition", "Default").put("deliverAt", T.plusSeconds(5).toString());
        ObjectNode fired = JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", "fired").put("messageId", m.toString());
        checker.verdict(lastId(0), scheduled, pos());
        checker.outcomeEvent(0, fired, pos());
        checker.verdict(lastId(0), scheduled, pos());
        DecodedFrame first = DecodedFrame.of(m, "t-0", "{\"v\":1}".getBytes(StandardCharsets.UTF_8));
        DecodedFrame second = DecodedFrame.of(m2, "t-2", "{\"v\":2}".getBytes(StandardCharsets.UTF_8));
        frames.add(() -> checker.fire(0, "q", "Default", 0, T.plusSeconds(1), first, "test"));
        frames.add(() -> checker.fire(0, "q", "Default", 1, T.plusSeconds(6), second, "test"));
        checker.outcomeEvent(0, JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", "fired")
                .put("messageId", m2.toString()), pos());
        assertThat(judge().clean()).as(judge().violations().toString()).isTrue();
    }

    private UUID schedule(int tenant, String key, String payload, Instant deliverAt) throws Exception {
        UUID m = UuidV7.next();
        upsert(tenant, key, m, payload, deliverAt, "scheduled");
        return m;
    }

    private void reschedule(int tenant, String key, UUID m, String payload, Instant deliverAt) throws Exception {
        upsert(tenant, key, m, payload, deliverAt, "rescheduled");
    }

    private void upsert(int tenant, String key, UUID m, String payload, Instant deliverAt, String type) throws Exception {
        String txn = "t-" + offset;
        checker.command(cmd(tenant, key, txn, payload, deliverAt, CommandKind.VALID));
        ObjectNode ev = event(tenant, type, key).put("messageId", m.toString()).put("txn", txn)
                .put("partition", "Default").put("deliverAt", deliverAt.toString());
        checker.verdict(lastId(tenant), ev, pos());
        lastTxn = txn;
    }

    private String lastTxn;

    private void fire(int tenant, UUID m, String payload, Instant createdAt) {
        long at = offset++;
        DecodedFrame frame = DecodedFrame.of(m, lastTxn, payload.getBytes(StandardCharsets.UTF_8));
        frames.add(() -> checker.fire(tenant, "q", "Default", at, createdAt, frame, "test"));
        checker.outcomeEvent(tenant, JSON.createObjectNode().put("type", "fired").put("messageId", m.toString()), pos());
    }

    /** The next position on the (one) audit partition: events are fed in the order they were published. */
    private Checker.Pos pos() {
        return new Checker.Pos(0, auditOffset++);
    }

    /** A record and its intent: a schedule when it has a txn, else a cancel (or a hostile record meant as malformed_json). */
    private Checker.Cmd cmd(int tenant, String key, String txn, String payload, Instant deliverAt, CommandKind kind) throws Exception {
        long hash = payload == null ? 0 : Intent.payloadHash(JSON.readTree(payload));
        long seq = ++offset;
        Intent in = kind == CommandKind.HOSTILE ? new Intent(seq, kind, tenant, null, "q", key, null, null, null, null, 0, "malformed_json")
                : new Intent(seq, kind, tenant, txn == null ? "cancel" : "schedule", "q", key, "Default", txn, null, deliverAt, hash, null);
        intents[(int) seq] = in;
        return new Checker.Cmd(tenant, 0, seq, T.minusSeconds(10).toEpochMilli(), seq, in);
    }

    private String lastId(int tenant) {
        return Checker.id(tenant, 0, offset);
    }

    private ObjectNode event(int tenant, String type, String key) {
        return JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", type)
                .put("tenant", tenant == 0 ? Stack.TENANT_A : Stack.TENANT_B).put("queue", "q").put("timerKey", key);
    }

    private final java.util.List<Runnable> frames = new java.util.ArrayList<>();
    private Findings judged;

    /** In the checker's order: verdicts build the messages, then the log's frames, then each message is judged. */
    private Findings judge() {
        if (judged == null) {
            checker.checkVerdictsAndBuildMessages();
            frames.forEach(Runnable::run);
            checker.judgeMessages();
            judged = checker.findings();
        }
        return judged;
    }
}
