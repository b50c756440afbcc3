package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cross-language checkpoint test (tests/xlang/SPEC.md) for Java: xlang/Xlang.java saves the
 * spec's state and restores it; against the C program (when built) the files are byte-identical
 * and each restores the other's.
 */
class XlangTest {
  private static final String PROGRAM = "xlang/Xlang.java";

  @TempDir Path tmp;

  private static File cProgram() {
    String path = System.getProperty("cairn.xlang.c");
    return path == null ? null : new File(path);
  }

  @Test
  void javaSavesTheSpecsStateAndRestoresIt() throws Exception {
    String path = tmp.resolve("java.ckpt").toString();
    assertEquals("", SourceLauncher.runOk(PROGRAM, "save", path).trim());
    List<String> listing = new ArrayList<>();
    try (CheckpointReader r = CheckpointReader.open(path)) {
      for (CheckpointReader.Entry e : r.entries()) listing.add(e.toString());
    }
    assertEquals(
        List.of(
            "_CHECKPOINTABLE_OBJECT_GRAPH string []",
            "layers/0/k/.ATTRIBUTES/VARIABLE_VALUE float64 [2]",
            "layers/1/flag/.ATTRIBUTES/VARIABLE_VALUE bool [4]",
            "model/b/.ATTRIBUTES/VARIABLE_VALUE int64 [3]",
            "model/w/.ATTRIBUTES/VARIABLE_VALUE float32 [2,3]",
            "save_counter/.ATTRIBUTES/VARIABLE_VALUE int64 []",
            "table/half/.ATTRIBUTES/VARIABLE_VALUE float16 []"),
        listing);
    assertEquals("xlang restore ok", SourceLauncher.runOk(PROGRAM, "restore", path).trim());
    SourceLauncher.Result missing = SourceLauncher.run(PROGRAM, "restore", tmp.resolve("missing").toString());
    assertNotEquals(0, missing.exitCode(), missing.output());
    assertTrue(missing.output().contains("NOT_FOUND"), missing.output());
  }

  @Test
  void javaAndCWriteTheSameBytesAndReadEachOther() throws Exception {
    File c = cProgram();
    Assumptions.assumeTrue(c != null && c.canExecute(), "bazel build //tests/xlang:xlang_c first");
    Path javaFile = tmp.resolve("java.ckpt");
    Path cFile = tmp.resolve("c.ckpt");
    SourceLauncher.runOk(PROGRAM, "save", javaFile.toString());
    SourceLauncher.Result saved = SourceLauncher.exec(List.of(c.getPath(), "save", cFile.toString()));
    assertEquals(0, saved.exitCode(), saved.output());
    assertEquals(-1L, Files.mismatch(cFile, javaFile), "Java's checkpoint differs from C's");
    assertEquals("xlang restore ok", SourceLauncher.runOk(PROGRAM, "restore", cFile.toString()).trim());
    SourceLauncher.Result restored = SourceLauncher.exec(List.of(c.getPath(), "restore", javaFile.toString()));
    assertEquals(0, restored.exitCode(), restored.output());
    assertEquals("xlang restore ok", restored.output().trim());
  }
}
