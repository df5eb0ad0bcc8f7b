package dev.muster.example.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.example.spring.GuideSteps.Kind;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class GuideStepsTest {
  @Test
  void aStepIsTheShBlockAfterItsComment() {
    GuideSteps g = GuideSteps.parse("""
        # Title
        <!-- guide-test: background ready="up" exports -->

        ```sh
        server --port 1 \\
          --flag
        ```
        ```sh
        not a step
        ```
        <!-- guide-test: run expect="5 ok" -->
        ```sh
        a
        b
        ```
        """);
    assertThat(g.steps()).hasSize(2);
    GuideSteps.Step first = g.steps().get(0);
    assertThat(first.kind()).isEqualTo(Kind.BACKGROUND);
    assertThat(first.text()).isEqualTo("up");
    assertThat(first.exports()).isTrue();
    assertThat(first.line()).isEqualTo(2);
    assertThat(first.commands()).containsExactly("server --port 1   --flag");
    assertThat(g.steps().get(1).commands()).containsExactly("a", "b");
    assertThat(g.steps().get(1).exports()).isFalse();
  }

  @Test
  void aCommentThatDoesNotParseNamesItsLine() {
    assertThatThrownBy(() -> GuideSteps.parse("x\n<!-- guide-test: run -->\n```sh\na\n```\n"))
        .hasMessageStartingWith("line 2: a guide-test comment needs");
    assertThatThrownBy(() -> GuideSteps.parse("<!-- guide-test: run ready=\"x\" -->\n```sh\na\n```\n"))
        .hasMessageStartingWith("line 1: run takes expect");
    assertThatThrownBy(() -> GuideSteps.parse("<!-- guide-test: run expect=\"x\" exports -->\n```sh\na\n```\n"))
        .hasMessageStartingWith("line 1: run takes expect");
    assertThatThrownBy(() -> GuideSteps.parse("<!-- guide-test: run expcet=\"x\" -->\n```sh\na\n```\n"))
        .hasMessageStartingWith("line 1: unknown word 'expcet'");
    assertThatThrownBy(() -> GuideSteps.parse("<!-- guide-test: run expect=\"x\" -->\ntext\n```sh\na\n```\n"))
        .hasMessageStartingWith("line 1: a guide-test comment must be followed by a ```sh block");
    assertThatThrownBy(() -> GuideSteps.parse("<!-- guide-test: run expect=\"x\" -->\n```sh\na\n"))
        .hasMessageStartingWith("line 2: the ```sh block is not closed");
  }

  /** The production guide parses, and its steps are the ones ProductionGuideIT checks, in its order. */
  @Test
  void theProductionGuideHasItsSevenSteps() throws Exception {
    GuideSteps g = GuideSteps.read(Path.of(System.getProperty("muster.guide", "../../docs/guide/production.md")));
    assertThat(g.steps()).extracting(GuideSteps.Step::kind).containsExactly(Kind.BACKGROUND, Kind.RUN,
        Kind.BACKGROUND, Kind.BACKGROUND, Kind.RUN, Kind.BACKGROUND, Kind.RUN);
    assertThat(g.steps()).extracting(s -> s.commands().get(s.commands().size() - 1).split(" ")[0]
        + " " + s.commands().get(s.commands().size() - 1).split(" ")[1]).containsExactlyElementsOf(List.of(
            "muster etcd", "muster auth", "java -jar", "muster grpc-serve", "muster grpc-call", "muster console",
            "muster doctor"));
  }
}
