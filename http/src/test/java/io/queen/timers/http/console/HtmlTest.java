package io.queen.timers.http.console;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HtmlTest {

    @Test
    void everyCharacterThatEndsTextOrAnAttributeIsEscaped() {
        assertThat(Html.text("<script>alert('x')</script> & \"q\"")).isEqualTo("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
        assertThat(Html.text(null)).isEmpty();
        assertThat(Html.url("a b/c&d=é")).isEqualTo("a+b%2Fc%26d%3D%C3%A9");
        assertThat(Html.page("<t>", "", "")).contains("<title>&lt;t&gt; ").doesNotContain("<script");
    }
}
