package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs example/*.java the way a reader would (the JDK's source launcher), so they cannot rot. */
class ExampleTest {
  private static String run(String source, String... args) throws Exception {
    return SourceLauncher.runOk(source, args);
  }

  @Test
  void exampleAddsTwoTensors() throws Exception {
    String output = run("example/Example.java");
    assertEquals("Tensor(float32[2,3], cpu) [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]", output.trim());
  }

  @Test
  void checkpointExampleSavesAndRestores(@TempDir Path dir) throws Exception {
    String listing =
        "_CHECKPOINTABLE_OBJECT_GRAPH string []\n"
            + "model/w/.ATTRIBUTES/VARIABLE_VALUE float32 [3]\n"
            + "save_counter/.ATTRIBUTES/VARIABLE_VALUE int64 []";
    assertEquals(
        "net/w:0 = [2.0, 3.0, 4.0] saved to ckpt-1\n" + listing,
        run("example/CheckpointExample.java", dir.toString()).trim());
    assertEquals(
        "net/w:0 = [3.0, 4.0, 5.0] saved to ckpt-2\n" + listing,
        run("example/CheckpointExample.java", dir.toString()).trim());
  }

  @Test
  void benchmarkRuns() throws Exception {
    String output = run("example/AddBenchmark.java", "1000");
    String line = "Add float32\\[16\\], [^:]+: [0-9.]+ ns/op wall, [0-9.]+ ns/op cpu over 1000 iterations";
    assertTrue(output.matches("(?s)" + line + "\\s+" + line + "\\s*"), output);
  }
}
