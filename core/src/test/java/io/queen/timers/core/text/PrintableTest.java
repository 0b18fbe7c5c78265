package io.queen.timers.core.text;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class PrintableTest {

    @Test
    void controlCharactersBidiOverridesAndLoneSurrogatesAreEscaped() {
        assertThat(Printable.line("a\r\nb\tc\u001b[31m\u0000\u007f\u0085\u009b\u2028\u202e\u2066\ud800x\udc00"))
                .isEqualTo("a\\r\\nb\\tc\\u001b[31m\\u0000\\u007f\\u0085\\u009b\\u2028\\u202e\\u2066\\ud800x\\udc00");
    }

    @Test
    void ordinaryTextIsKeptAsItIs() {
        String s = "order-42/ключ 日本 😀 é\u0301 \\n";
        assertThat(Printable.line(s)).isSameAs(s);
        assertThat(Printable.line(null)).isEqualTo("null");
    }

    @Test
    void anEscapedJsonLineIsStillJsonWithTheSameValue() throws Exception {
        ObjectMapper json = new ObjectMapper();
        String line = json.writeValueAsString(java.util.Map.of("k", "a\u0085\u202e\u007f\u001b"));
        assertThat(json.readTree(Printable.line(line))).isEqualTo(json.readTree(line));
        assertThat(Printable.line(line)).doesNotContain("\u0085", "\u202e", "\u007f");
    }
}
