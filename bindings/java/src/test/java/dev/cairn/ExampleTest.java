package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import dev.cairn.raw.NativeLibrary;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Runs example/*.java the way a reader would (the JDK's source launcher), so they cannot rot. */
class ExampleTest {
  private static String run(String source, String... args) throws Exception {
    File base = new File(System.getProperty("basedir", "."));
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>();
    command.add(java);
    command.add("-cp");
    command.add(new File(base, "target/classes").getPath());
    // Hand the child the library this JVM loaded.
    String path = System.getProperty(NativeLibrary.PATH_PROPERTY, System.getProperty(NativeLibrary.LIBRARY_PATH_PROPERTY));
    if (path != null) {
      command.add("-D" + NativeLibrary.PATH_PROPERTY + "=" + path);
    } else {
      command.add("-Djava.library.path=" + System.getProperty("java.library.path"));
    }
    command.add(new File(base, source).getPath());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), source + " timed out");
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), output);
    return output;
  }

  @Test
  void exampleAddsTwoTensors() throws Exception {
    String output = run("example/Example.java");
    assertEquals("Tensor(float32[2,3], cpu) [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]", output.trim());
  }

  @Test
  void benchmarkRuns() throws Exception {
    String output = run("example/AddBenchmark.java", "1000");
    String line = "Add float32\\[16\\], [^:]+: [0-9.]+ ns/op wall, [0-9.]+ ns/op cpu over 1000 iterations";
    assertTrue(output.matches("(?s)" + line + "\\s+" + line + "\\s*"), output);
  }
}
