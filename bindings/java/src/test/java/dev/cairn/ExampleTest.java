package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
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
  void weightsExampleSavesLoadsExportsAndRestores(@TempDir Path dir) throws Exception {
    assertEquals(
        "loaded 4 variables\n"
            + "SAFETENSORS format=pt\n"
            + "model.layer-0.bias F32 [4]\n"
            + "model.layer-0.kernel F32 [3, 4]\n"
            + "model.layer-1.bias F32 [2]\n"
            + "model.layer-1.kernel F32 [4, 2]\n"
            + "restored from TensorFlow: same outputs true",
        run("example/WeightsExample.java", dir.toString()).trim());
    assertTrue(dir.resolve("tf-ckpt.index").toFile().isFile());
  }

  @Test
  void benchmarkRuns() throws Exception {
    String output = run("example/AddBenchmark.java", "1000");
    String line = "Add float32\\[16\\], [^:]+: -?[0-9.]+ ns/op wall, -?[0-9.]+ ns/op cpu over 1000 iterations\n";
    // Three rounds of Java then C, then the difference.
    assertTrue(output.matches("(?s)(" + line + "){7}"), output);
    assertTrue(output.contains("Ops.add + close: ") && output.contains("C (cairn_op_run + cairn_tensor_free): "), output);
  }

  private static String digits() {
    return new File(SourceLauncher.base(), "../../examples/data/digits.csv").getPath();
  }

  // The lines of a demo run with the examples/s figure and the checkpoint directory blanked out.
  private static String comparable(String output, Path dir) {
    return output.replaceAll("  \\d+ examples/s", "  N examples/s").replace(dir.toString(), "DIR");
  }

  @Test
  void fitDigitsTrainsEvaluatesAndRestores(@TempDir Path dir) throws Exception {
    String output = run("example/FitDigits.java", digits(), dir.toString());
    String[] lines = output.split("\n");
    assertTrue(output.startsWith("Epoch 1/20\n"), output);
    String accuracy = lines[lines.length - 2];
    assertTrue(accuracy.matches("test accuracy: 0\\.\\d{4}"), accuracy);
    assertTrue(Double.parseDouble(accuracy.substring("test accuracy: ".length())) >= 0.92, accuracy);
    assertEquals("same predictions: true", lines[lines.length - 1]);
    // ModelCheckpoint kept the last 5 epochs; TensorBoard wrote training and validation runs.
    try (var files = java.nio.file.Files.list(dir.resolve("checkpoints"))) {
      assertEquals(List.of("checkpoint", "ckpt-16", "ckpt-17", "ckpt-18", "ckpt-19", "ckpt-20"),
          files.map(f -> f.getFileName().toString()).sorted().toList());
    }
    for (String run : List.of("train", "validation")) {
      try (var files = java.nio.file.Files.list(dir.resolve("logs").resolve(run))) {
        assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("events.out.tfevents.")), run);
      }
    }
  }

  @Test
  void trainDigitsTrainsAndResumes(@TempDir Path dir) throws Exception {
    String first = run("example/TrainDigits.java", "--data", digits(), "--dir", dir.toString(), "--epochs", "2");
    String[] lines = first.split("\n");
    assertEquals("digits: 1438 training and 359 test samples of 8x8 pixels", lines[0]);
    assertEquals("Model: \"mlp\"", lines[1]);
    assertTrue(first.contains("Total params: 4,810"), first);
    String epoch = "epoch  %d/%d  loss \\d\\.\\d{4}  accuracy \\d\\.\\d{4}  \\d+ examples/s";
    assertTrue(lines[lines.length - 4].matches(String.format(epoch, 1, 2)), lines[lines.length - 4]);
    assertTrue(lines[lines.length - 3].matches(String.format(epoch, 2, 2)), lines[lines.length - 3]);
    assertTrue(lines[lines.length - 2].matches("test accuracy: 0\\.(8|9)\\d{3}"), lines[lines.length - 2]);
    assertTrue(lines[lines.length - 1].matches("weights: [0-9a-f]{16}"), lines[lines.length - 1]);

    // 1438 samples in batches of 32: 45 steps per epoch; the checkpoint's number is the step.
    String resumed = run("example/TrainDigits.java", "--data", digits(), "--dir", dir.toString(), "--epochs", "3");
    assertTrue(resumed.contains("resumed from " + dir.resolve("ckpt-90") + " after step 90\n"), resumed);
    assertTrue(resumed.contains("\nepoch  3/3  loss "), resumed);
    assertFalse(resumed.contains("epoch  1/"), resumed);

    SourceLauncher.Result usage = SourceLauncher.run("example/TrainDigits.java", "--epochs", "0");
    assertEquals(2, usage.exitCode());
    assertTrue(usage.output().contains("usage:"), usage.output());
  }

  @Test
  void trainDigitsKilledMidEpochEndsWithTheUninterruptedWeights(@TempDir Path dir) throws Exception {
    String whole = run("example/TrainDigits.java", "--data", digits(), "--dir", dir.resolve("a").toString(),
        "--epochs", "2");
    // 45 steps per epoch; saves every 7 steps and at each epoch's end: the last before step 52 is 49,
    // mid-epoch 2.
    String[] args = {"--data", digits(), "--dir", dir.resolve("b").toString(), "--epochs", "2", "--save-every", "7"};
    SourceLauncher.Result killed = SourceLauncher.run("example/TrainDigits.java", concat(args, "--kill-after", "52"));
    assertEquals(3, killed.exitCode(), killed.output());
    assertFalse(killed.output().contains("epoch  2/2"), killed.output());
    String resumed = run("example/TrainDigits.java", args);
    assertTrue(resumed.contains("resumed from " + dir.resolve("b").resolve("ckpt-49") + " after step 49\n"), resumed);
    String weights = whole.substring(whole.lastIndexOf("weights: "));
    assertTrue(resumed.endsWith(weights), resumed + " vs " + weights);
    // The resumed epoch 2 reports the metrics of the uninterrupted one.
    String epoch2 = whole.substring(whole.indexOf("epoch  2/2"), whole.indexOf("examples/s", whole.indexOf("epoch  2/2")));
    assertTrue(resumed.contains(epoch2.replaceAll("\\d+ $", "")), resumed + " vs " + epoch2);
  }

  // The records of the one event file in `logdir` other than `known`.
  private static Path newEventFile(Path logdir, List<Path> known) throws Exception {
    try (var files = java.nio.file.Files.list(logdir)) {
      List<Path> fresh = files.filter(f -> f.getFileName().toString().startsWith("events.out.tfevents."))
                             .filter(f -> !known.contains(f)).toList();
      assertEquals(1, fresh.size(), fresh.toString());
      return fresh.get(0);
    }
  }

  private static long records(Path eventFile) {
    long n = 0;
    try (RecordReader r = RecordReader.open(eventFile.toString())) {
      for (byte[] b : r) ++n;
    }
    return n;
  }

  @Test
  void trainDigitsWritesSummariesToLogdir(@TempDir Path dir) throws Exception {
    Path logdir = dir.resolve("logs");
    String[] args = {"--data", digits(), "--dir", dir.resolve("ckpt").toString(), "--logdir", logdir.toString()};
    String first = run("example/TrainDigits.java", concat(args, "--epochs", "2"));
    assertTrue(first.endsWith("\n") && first.contains("test accuracy: "), first);
    // file_version, 2 scalars per epoch, the graph of train_step after the first epoch
    Path one = newEventFile(logdir, List.of());
    assertEquals(1 + 2 * 2 + 1, records(one));
    run("example/TrainDigits.java", concat(args, "--epochs", "3"));
    assertEquals(1 + 2 + 1, records(newEventFile(logdir, List.of(one))));
  }

  private static String[] concat(String[] a, String... b) {
    String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Test
  void trainDigitsPrintsWhatTheCDemoPrints(@TempDir Path dir) throws Exception {
    String c = System.getProperty("cairn.train_digits.c");
    Assumptions.assumeTrue(c != null && new File(c).canExecute(), "bazel build //examples/c:train_digits first");
    Path cDir = dir.resolve("c");
    Path javaDir = dir.resolve("java");
    for (String epochs : new String[] {"2", "3"}) { // a fresh run, then a resumed one
      List<String> command = new ArrayList<>(List.of(c, "--data", digits(), "--dir", cDir.toString(), "--epochs", epochs));
      SourceLauncher.Result fromC = SourceLauncher.exec(command);
      assertEquals(0, fromC.exitCode(), fromC.output());
      String fromJava =
          run("example/TrainDigits.java", "--data", digits(), "--dir", javaDir.toString(), "--epochs", epochs);
      assertEquals(comparable(fromC.output(), cDir), comparable(fromJava, javaDir));
    }
  }
}
