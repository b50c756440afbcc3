package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a program the way a reader would: the JDK's source launcher over target/classes. */
final class SourceLauncher {
  private SourceLauncher() {}

  /** The project directory (bindings/java). */
  static File base() {
    return new File(System.getProperty("basedir", "."));
  }

  /** Runs {@code source} (relative to bindings/java) with {@code args}; returns exit code and output. */
  static Result run(String source, String... args) throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>();
    command.add(java);
    command.add("-cp");
    command.add(new File(base(), "target/classes").getPath());
    // The child loads the natives as this JVM did: from target/classes, or the directory given.
    String dir = System.getProperty(NativeLibrary.LIBRARY_PATH_PROPERTY);
    if (dir != null) command.add("-D" + NativeLibrary.LIBRARY_PATH_PROPERTY + "=" + dir);
    command.add(new File(base(), source).getPath());
    command.addAll(List.of(args));
    return exec(command);
  }

  static Result exec(List<String> command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), command + " timed out");
    return new Result(p.exitValue(), output);
  }

  /** Like {@link #run} but fails unless the program exits 0; returns its output. */
  static String runOk(String source, String... args) throws Exception {
    Result r = run(source, args);
    assertEquals(0, r.exitCode(), r.output());
    return r.output();
  }

  record Result(int exitCode, String output) {}
}
