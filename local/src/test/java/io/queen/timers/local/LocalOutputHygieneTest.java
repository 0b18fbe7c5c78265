package io.queen.timers.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.cli.Output;
import org.junit.jupiter.api.Test;

/**
 * What {@code local} prints for an audit event carries no raw control or bidi character, in the text and the JSON
 * form: the cli's OutputHygieneIT holds its commands to the same rule, with the same check.
 */
class LocalOutputHygieneTest {

    @Test
    void localEscapesAuditEventsItPrints() throws Exception {
        String human = printed("{\"type\":\"rejected\",\"reason\":\"key_mismatch\",\"queue\":\"q\",\"timerKey\":\""
                + "a\\r\\nforged\\u001b[31m\"}", false);
        assertClean(human, "local (text)");
        String json = printed("{\"type\":\"scheduled\",\"queue\":\"q\",\"timerKey\":\"a\u0085\u202e\"}", true);
        assertClean(json, "local (json)");
        assertThat(json).contains("\\u0085");
    }

    private static String printed(String eventJson, boolean json) throws Exception {
        var node = Output.mapper().readTree(eventJson);
        return AuditWatcher.printable(AuditWatcher.humanLine(node), node.toString(), json);
    }

    static void assertClean(String printed, String what) {
        for (char ch : printed.toCharArray()) {
            boolean bad = (ch < 0x20 && ch != '\n') || (ch >= 0x7f && ch <= 0x9f) || (ch >= 0x202a && ch <= 0x202e) || ch == 0x2028;
            assertThat(bad).as("%s printed U+%04X raw: %s", what, (int) ch, printed).isFalse();
        }
        assertThat(printed).as(what).doesNotContain("\nINFO forged");
    }
}
