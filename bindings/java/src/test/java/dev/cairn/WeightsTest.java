package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Weights in other formats: CheckpointReader over Cairn, TensorFlow and safetensors files,
 * Checkpoint.export and restore of TensorFlow checkpoints, CairnObject.loadWeights / saveWeights,
 * against the committed goldens of tests/golden/tf_checkpoint and tests/golden/safetensors.
 */
class WeightsTest {
  private static final String VV = "/.ATTRIBUTES/VARIABLE_VALUE";
  private static final List<String> MLP_NAMES = List.of("layer-0/bias", "layer-0/kernel", "layer-1/bias", "layer-1/kernel");

  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext(CairnContext.options().seed(7));
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private static Path golden(String relative) {
    return new File(SourceLauncher.base(), "../../tests/golden").toPath().resolve(relative).normalize();
  }

  private static Map<String, Object> expectedJson(String folder) throws IOException {
    return Json.object(Json.parse(Files.readString(golden(folder).resolve("expected.json"))));
  }

  // ---- models ----

  /** A Sequential of Dense layers (relu between them) on `inputs` features, built by one call. */
  private Sequential mlp(long inputs, long... units) {
    Layer[] layers = new Layer[units.length];
    for (int i = 0; i < units.length; ++i) {
      Layers.DenseOptions o = Layers.denseOptions(units[i]);
      if (i + 1 < units.length) o.activation("relu");
      layers[i] = Layers.dense(ctx, o);
    }
    try {
      Sequential model = Sequential.of(ctx, "mlp", layers);
      try (Tensor x = Tensor.of(ctx, new float[(int) inputs], 1, inputs)) {
        model.call(x).close();
      }
      return model;
    } finally {
      for (Layer l : layers) l.close();
    }
  }

  /** Every weight's values, in weights() order (kernel, bias of each layer). */
  private static List<float[]> values(Layer model) {
    List<Variable> w = model.weights();
    try {
      List<float[]> out = new ArrayList<>();
      for (Variable v : w) {
        try (Tensor t = v.read()) {
          out.add(t.toFloatArray());
        }
      }
      return out;
    } finally {
      w.forEach(Variable::close);
    }
  }

  private static void assertValuesEqual(List<float[]> want, List<float[]> got) {
    assertEquals(want.size(), got.size());
    for (int i = 0; i < want.size(); ++i) assertArrayEquals(want.get(i), got.get(i), "weight " + i);
  }

  private static void assertValuesDiffer(List<float[]> a, List<float[]> b) {
    for (int i = 0; i < a.size(); ++i) {
      if (!java.util.Arrays.equals(a.get(i), b.get(i))) return;
    }
    fail("two freshly initialized models have equal weights: the round trip would prove nothing");
  }

  private static List<String> keys(String path) {
    try (CheckpointReader r = CheckpointReader.open(path)) {
      return r.keys();
    }
  }

  /** One Adam step with gradient element i = g * (i % 7 - 0.5) for every weight (mlp.h's step). */
  private void step(Layer model, Optimizer opt, float g) {
    List<Variable> vars = model.trainableWeights();
    Tensor[] grads = new Tensor[vars.size()];
    try {
      for (int i = 0; i < grads.length; ++i) {
        long[] shape = vars.get(i).shape();
        float[] x = new float[(int) java.util.Arrays.stream(shape).reduce(1, (a, b) -> a * b)];
        for (int j = 0; j < x.length; ++j) x[j] = g * ((j % 7) - 0.5f);
        grads[i] = Tensor.of(ctx, x, shape);
      }
      opt.applyGradients(grads, vars);
    } finally {
      for (Tensor t : grads) if (t != null) t.close();
      vars.forEach(Variable::close);
    }
  }

  // ---- save / load by name ----

  @ParameterizedTest
  @EnumSource(value = WeightsFormat.class, names = {"SAFETENSORS", "TF", "CAIRN"})
  void saveWeightsThenLoadWeightsIntoAFreshModel(WeightsFormat format, @TempDir Path dir) {
    String path = dir.resolve(format == WeightsFormat.SAFETENSORS ? "w.safetensors" : "w").toString();
    try (Sequential a = mlp(3, 4, 2);
        Sequential b = mlp(3, 4, 2)) {
      a.saveWeights(path, format);
      try (CheckpointReader r = CheckpointReader.open(path)) {
        assertEquals(format, r.format());
        List<String> want = new ArrayList<>(MLP_NAMES);
        if (format == WeightsFormat.CAIRN) want.add(0, "_CHECKPOINTABLE_OBJECT_GRAPH"); // a root without children
        assertEquals(want, r.keys());
        for (CheckpointReader.Entry e : r.entries()) {
          if (e.key().startsWith("_")) continue;
          assertEquals(DType.FLOAT32, e.dtype(), e.key());
          assertEquals(format == WeightsFormat.SAFETENSORS ? "F32" : "float32", e.typeName(), e.key());
        }
        int kernel = r.keys().indexOf("layer-0/kernel");
        assertArrayEquals(new long[] {3, 4}, r.entries().get(kernel).shape());
        assertEquals(r.entries().get(kernel).typeName(), r.typeName(kernel));
        assertNull(r.typeName(99));
      }
      assertValuesDiffer(values(a), values(b));
      assertEquals(4, b.loadWeights(path));
      assertValuesEqual(values(a), values(b));
    }
  }

  @Test
  void prefixSeparatorAndMetadataNameWhatIsSaved(@TempDir Path dir) {
    String path = dir.resolve("model.safetensors").toString();
    String note = "say \"hi\"\n\\ \u00e9\u6f22\u0001\t/";
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put("note", note);
    meta.put("format", "pt");
    WeightsOptions torch = new WeightsOptions().prefix("model.").separator(".").metadata(meta);
    try (Sequential a = mlp(3, 4, 2);
        Sequential b = mlp(3, 4, 2)) {
      a.saveWeights(path, WeightsFormat.SAFETENSORS, torch);
      List<String> names = List.of("model.layer-0.bias", "model.layer-0.kernel", "model.layer-1.bias", "model.layer-1.kernel");
      try (CheckpointReader r = CheckpointReader.open(path)) {
        assertEquals(names, r.keys());
        Map<String, String> got = r.metadata();
        Map<String, String> plain = new TreeMap<>(got);
        plain.keySet().removeIf(k -> k.startsWith("cairn.checksum."));
        assertEquals(Map.of("format", "pt", "note", note), plain);
        // Checksums are on by default: one per tensor, in key order, and verify checks them.
        assertEquals(names.stream().map(n -> "cairn.checksum." + n).collect(Collectors.toSet()),
            got.keySet().stream().filter(k -> k.startsWith("cairn.checksum.")).collect(Collectors.toSet()));
        assertEquals(new ArrayList<>(new TreeSet<>(got.keySet())), new ArrayList<>(got.keySet()));
        for (String n : names) assertTrue(r.verify(n), n);
        assertThrows(UnsupportedOperationException.class, () -> got.put("x", "y"));
      }
      // Without the prefix the names match no variable: the load fails and changes nothing.
      List<float[]> before = values(b);
      CairnException e = assertThrows(CairnException.class, () -> b.loadWeights(path));
      assertTrue(e.code() == Code.NOT_FOUND || e.code() == Code.INVALID_ARGUMENT, e.getMessage());
      assertValuesEqual(before, values(b));
      assertEquals(4, b.loadWeights(path, torch));
      assertValuesEqual(values(a), values(b));
    }
    assertEquals(Map.of("format", "pt", "note", note), torch.metadata());
    assertEquals("{\"format\":\"pt\",\"note\":\"say \\\"hi\\\"\\n\\\\ \u00e9\u6f22\\u0001\\t/\"}", torch.metadataJson());
  }

  @Test
  void aPrefixSelectsAModuleInsideACheckpoint(@TempDir Path dir) {
    String cairn = dir.resolve("ckpt").toString();
    String tf = dir.resolve("tf-ckpt").toString();
    try (Sequential a = mlp(3, 4, 2);
        Optimizer adam = Optimizer.adam(ctx, 0.01);
        Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", a, "optimizer", adam))) {
      step(a, adam, 1f); // the optimizer's slots are keys too; a load by name passes them over
      ckpt.write(cairn);
      ckpt.export(tf, WeightsFormat.TF, Checkpoint.exportOptions().kerasNames(false));
      for (String path : List.of(cairn, tf)) {
        assertTrue(keys(path).contains("model/layer-0/kernel/.OPTIMIZER_SLOT/optimizer/m" + VV), keys(path).toString());
        try (Sequential b = mlp(3, 4, 2)) {
          assertEquals(4, b.loadWeights(path, new WeightsOptions().prefix("model/")), path);
          assertValuesEqual(values(a), values(b));
        }
      }
    }
  }

  @Test
  void checksumsAreOptInAndCatchDamage(@TempDir Path dir) throws IOException {
    Path plain = dir.resolve("plain.safetensors");
    Path summed = dir.resolve("summed.safetensors");
    try (Sequential a = mlp(3, 4, 2);
        Sequential b = mlp(3, 4, 2)) {
      a.saveWeights(plain.toString(), WeightsFormat.SAFETENSORS, new WeightsOptions().checksums(false));
      a.saveWeights(summed.toString(), WeightsFormat.SAFETENSORS);
      try (CheckpointReader r = CheckpointReader.open(plain.toString())) {
        assertTrue(r.metadata().isEmpty(), r.metadata().toString());
        for (String k : MLP_NAMES) assertFalse(r.verify(k), k);
        assertEquals(Code.NOT_FOUND, assertThrows(CairnException.class, () -> r.verify("nope")).code());
      }
      // Flip the file's last byte: the last tensor's data.
      try (RandomAccessFile f = new RandomAccessFile(summed.toFile(), "rw")) {
        f.seek(f.length() - 1);
        int last = f.read();
        f.seek(f.length() - 1);
        f.write(last ^ 0x55);
      }
      try (CheckpointReader r = CheckpointReader.open(summed.toString())) {
        List<String> damaged = new ArrayList<>();
        for (String k : MLP_NAMES) {
          try {
            assertTrue(r.verify(k), k);
          } catch (CairnException e) {
            assertEquals(Code.DATA_LOSS, e.code(), e.getMessage());
            assertTrue(e.getMessage().contains(k), e.getMessage());
            damaged.add(k);
          }
        }
        assertEquals(1, damaged.size(), damaged.toString());
      }
      List<float[]> before = values(b);
      CairnException e = assertThrows(CairnException.class, () -> b.loadWeights(summed.toString()));
      assertEquals(Code.DATA_LOSS, e.code(), e.getMessage());
      assertValuesEqual(before, values(b));
    }
  }

  @Test
  void shardsGoIntoADirectoryWithAnIndex(@TempDir Path dir) throws IOException {
    Path shards = dir.resolve("sharded");
    try (Sequential a = mlp(3, 4, 2);
        Sequential b = mlp(3, 4, 2)) {
      a.saveWeights(shards.toString(), WeightsFormat.SAFETENSORS, new WeightsOptions().maxShardBytes(64));
      assertTrue(Files.isRegularFile(shards.resolve("model.safetensors.index.json")));
      try (Stream<Path> files = Files.list(shards)) {
        long n = files.filter(p -> p.getFileName().toString().endsWith(".safetensors")).count();
        assertTrue(n >= 2, n + " shards");
      }
      try (CheckpointReader r = CheckpointReader.open(shards.toString())) {
        assertEquals(WeightsFormat.SAFETENSORS, r.format());
        assertEquals(MLP_NAMES, r.keys());
      }
      assertEquals(4, b.loadWeights(shards.resolve("model.safetensors.index.json").toString()));
      assertValuesEqual(values(a), values(b));
    }
  }

  @Test
  void missingAndUnusedValues(@TempDir Path dir) {
    String path = dir.resolve("w.safetensors").toString();
    try (Sequential a = mlp(3, 4, 2);
        Sequential deeper = mlp(3, 4, 2, 5);
        Sequential shallower = mlp(3, 4)) {
      a.saveWeights(path, WeightsFormat.SAFETENSORS);
      List<float[]> before = values(deeper);
      CairnException missing = assertThrows(CairnException.class, () -> deeper.loadWeights(path));
      assertEquals(Code.NOT_FOUND, missing.code(), missing.getMessage());
      assertTrue(missing.getMessage().contains("layer-2/kernel"), missing.getMessage());
      assertValuesEqual(before, values(deeper));
      assertEquals(4, deeper.loadWeights(path, new WeightsOptions().allowMissing(true)));
      List<float[]> got = values(deeper);
      assertValuesEqual(values(a), got.subList(0, 4));
      assertArrayEquals(before.get(4), got.get(4)); // layer-2 kept its values
      CairnException unused = assertThrows(CairnException.class, () -> shallower.loadWeights(path));
      assertEquals(Code.INVALID_ARGUMENT, unused.code(), unused.getMessage());
      assertTrue(unused.getMessage().contains("layer-1/kernel"), unused.getMessage());
      assertEquals(2, shallower.loadWeights(path, new WeightsOptions().allowUnused(true)));
      assertValuesEqual(values(a).subList(0, 2), values(shallower));
    }
  }

  // ---- errors ----

  @Test
  void errorsCarryTheCodeAndLeaveVariablesAlone(@TempDir Path dir) throws IOException {
    String missing = dir.resolve("nope.safetensors").toString();
    Path file = dir.resolve("w.safetensors");
    try (Sequential a = mlp(3, 4, 2);
        Sequential wider = mlp(3, 4, 3)) {
      CairnException nf = assertThrows(CairnException.class, () -> a.loadWeights(missing));
      assertEquals(Code.NOT_FOUND, nf.code());
      assertTrue(nf.getMessage().contains(missing), nf.getMessage());
      assertEquals(Code.NOT_FOUND, assertThrows(CairnException.class, () -> CheckpointReader.open(missing)).code());

      // layer-0 fits, layer-1 does not: nothing changes, and the message names the variable.
      a.saveWeights(file.toString(), WeightsFormat.SAFETENSORS);
      List<float[]> before = values(wider);
      CairnException shape = assertThrows(CairnException.class, () -> wider.loadWeights(file.toString()));
      assertEquals(Code.INVALID_ARGUMENT, shape.code(), shape.getMessage());
      assertTrue(shape.getMessage().contains("layer-1/"), shape.getMessage());
      assertValuesEqual(before, values(wider));

      // A truncated file: DATA_LOSS, and again nothing changes.
      byte[] bytes = Files.readAllBytes(file);
      Path truncated = dir.resolve("truncated.safetensors");
      Files.write(truncated, java.util.Arrays.copyOf(bytes, bytes.length - 20));
      try (Sequential b = mlp(3, 4, 2)) {
        List<float[]> b0 = values(b);
        CairnException dl = assertThrows(CairnException.class, () -> b.loadWeights(truncated.toString()));
        assertEquals(Code.DATA_LOSS, dl.code(), dl.getMessage());
        assertValuesEqual(b0, values(b));
      }
      assertEquals(Code.DATA_LOSS,
          assertThrows(CairnException.class, () -> CheckpointReader.open(truncated.toString())).code());

      CairnException auto = assertThrows(CairnException.class,
          () -> a.saveWeights(dir.resolve("auto").toString(), WeightsFormat.AUTO));
      assertEquals(Code.INVALID_ARGUMENT, auto.code());
      assertThrows(NullPointerException.class, () -> a.saveWeights(file.toString(), null));
      assertThrows(IllegalArgumentException.class, () -> new WeightsOptions().maxShardBytes(-1));
      try (Trackable empty = Trackable.create(ctx)) {
        assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class,
            () -> empty.saveWeights(dir.resolve("empty").toString(), WeightsFormat.SAFETENSORS)).code());
      }
      try (Checkpoint ckpt = Checkpoint.create(ctx, "model", a)) {
        assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class,
            () -> ckpt.export(dir.resolve("x").toString(), WeightsFormat.AUTO)).code());
        String noDir = dir.resolve("no/such/dir/ckpt").toString();
        CairnException nd = assertThrows(CairnException.class, () -> ckpt.export(noDir, WeightsFormat.TF));
        assertEquals(Code.NOT_FOUND, nd.code(), nd.getMessage());
        assertTrue(nd.getMessage().contains(dir.resolve("no/such/dir").toString()), nd.getMessage());
        // A safetensors file has no object graph: restore refuses it, loadWeights reads it.
        CairnException noGraph = assertThrows(CairnException.class, () -> ckpt.restore(file.toString()));
        assertEquals(Code.INVALID_ARGUMENT, noGraph.code(), noGraph.getMessage());
      }
    }
    Sequential closed = mlp(3, 2);
    closed.close();
    ClosedAssert.assertClosed("FAILED_PRECONDITION: CairnObject.loadWeights: sequential is closed",
        () -> closed.loadWeights(file.toString()));
  }

  // ---- checkpoints: export and restore ----

  @Test
  void anExportedTensorFlowCheckpointRestoresIntoAFreshOne(@TempDir Path dir) {
    String prefix = dir.resolve("tf-ckpt").toString();
    List<float[]> saved;
    List<float[]> afterNextStep;
    try (Sequential model = mlp(3, 4, 2);
        Optimizer adam = Optimizer.adam(ctx, 0.05);
        Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", model, "optimizer", adam))) {
      step(model, adam, 1f);
      step(model, adam, -0.5f);
      ckpt.export(prefix, WeightsFormat.TF);
      assertTrue(new File(prefix + ".index").isFile());
      assertTrue(new File(prefix + ".data-00000-of-00001").isFile());
      assertEquals(0, ckpt.saveCounter()); // export leaves it alone
      saved = values(model);
      step(model, adam, 0.25f);
      afterNextStep = values(model);
    }
    try (CheckpointReader r = CheckpointReader.open(prefix)) {
      assertEquals(WeightsFormat.TF, r.format());
      List<String> keys = r.keys();
      assertTrue(keys.contains("_CHECKPOINTABLE_OBJECT_GRAPH"), keys.toString());
      assertTrue(keys.contains("save_counter" + VV), keys.toString());
      byte[] graph = r.loadString("_CHECKPOINTABLE_OBJECT_GRAPH");
      assertTrue(graph.length > 0);
      assertArrayEquals(graph, r.loadStringElement("_CHECKPOINTABLE_OBJECT_GRAPH", 0));
      assertEquals(Code.INVALID_ARGUMENT,
          assertThrows(CairnException.class, () -> r.loadStringElement("_CHECKPOINTABLE_OBJECT_GRAPH", 1)).code());
      assertEquals(Code.INVALID_ARGUMENT,
          assertThrows(CairnException.class, () -> r.loadStringElement("save_counter" + VV, 0)).code());
      assertTrue(r.metadata().isEmpty());
    }
    // A fresh model and optimizer, restored after the model is built; the slots arrive on the
    // first step, which then leads where the original's did.
    try (Sequential model = mlp(3, 4, 2);
        Optimizer adam = Optimizer.adam(ctx, 0.05);
        Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", model, "optimizer", adam));
        RestoreStatus status = ckpt.restore(prefix)) {
      assertEquals(2, adam.iterations());
      assertValuesEqual(saved, values(model));
      step(model, adam, 0.25f);
      List<float[]> got = values(model);
      for (int i = 0; i < got.size(); ++i) assertArrayEquals(afterNextStep.get(i), got.get(i), 1e-6f, "weight " + i);
      status.assertConsumed();
    }
  }

  @Test
  void exportOptionsAndFormats(@TempDir Path dir) {
    try (Sequential model = mlp(3, 4, 2);
        Checkpoint ckpt = Checkpoint.create(ctx, "model", model)) {
      String keras = dir.resolve("keras").toString();
      String cairnNames = dir.resolve("cairn-names").toString();
      ckpt.export(keras, WeightsFormat.TF, Checkpoint.exportOptions().saveCounter(false));
      ckpt.export(cairnNames, WeightsFormat.TF, Checkpoint.exportOptions().kerasNames(false).saveCounter(true));
      assertFalse(keys(keras).contains("save_counter" + VV), keys(keras).toString());
      assertFalse(keys(keras).contains("model/layer-0/kernel" + VV), keys(keras).toString());
      assertTrue(keys(cairnNames).contains("save_counter" + VV), keys(cairnNames).toString());
      assertTrue(keys(cairnNames).contains("model/layer-0/kernel" + VV), keys(cairnNames).toString());

      String cairn = dir.resolve("c").toString();
      ckpt.export(cairn, WeightsFormat.CAIRN);
      String safetensors = dir.resolve("c.safetensors").toString();
      ckpt.export(safetensors, WeightsFormat.SAFETENSORS);
      try (CheckpointReader r = CheckpointReader.open(cairn)) {
        assertEquals(WeightsFormat.CAIRN, r.format());
        assertTrue(r.keys().contains("model/layer-0/kernel" + VV), r.keys().toString());
      }
      try (CheckpointReader r = CheckpointReader.open(safetensors)) {
        assertEquals(WeightsFormat.SAFETENSORS, r.format());
        assertTrue(r.keys().contains("model/layer-0/kernel" + VV), r.keys().toString());
        assertFalse(r.keys().contains("_CHECKPOINTABLE_OBJECT_GRAPH"), r.keys().toString());
      }
      // Each restores into a fresh model (the TF ones through their object graph).
      for (String path : List.of(keras, cairnNames, cairn)) {
        try (Sequential fresh = mlp(3, 4, 2);
            Checkpoint c = Checkpoint.create(ctx, "model", fresh);
            RestoreStatus status = c.restore(path)) {
          assertValuesEqual(values(model), values(fresh));
          status.assertExistingObjectsMatched();
        }
      }
    }
  }

  // ---- the goldens ----

  /** The Cairn twin of the golden Keras 3 model: Sequential(Dense(16, relu), Dense(3)) on 8 inputs. */
  private Sequential kerasTwin(boolean build) {
    try (Layer d1 = Layers.dense(ctx, Layers.denseOptions(16).activation("relu"));
        Layer d2 = Layers.dense(ctx, Layers.denseOptions(3))) {
      Sequential model = Sequential.of(ctx, "sequential", d1, d2);
      if (build) {
        try (Tensor x = Tensor.of(ctx, new float[8], 1, 8)) {
          model.call(x).close();
        }
      }
      return model;
    }
  }

  private static float[] load(CheckpointReader r, CairnContext ctx, String key) {
    try (Tensor t = r.load(ctx, key)) {
      return t.toFloatArray();
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void theKeras3GoldenRestoresIntoSequentialAndAdam(boolean buildFirst) {
    String prefix = golden("tf_checkpoint/keras3_mlp/ckpt").toString();
    String[] w = new String[4];
    String[] m = new String[4];
    String[] v = new String[4];
    for (int i = 0; i < 4; ++i) {
      w[i] = "optimizer/_trainable_variables/" + i + VV;
      m[i] = "optimizer/_variables/" + (2 + 2 * i) + VV;
      v[i] = "optimizer/_variables/" + (3 + 2 * i) + VV;
    }
    try (CheckpointReader reader = CheckpointReader.open(prefix);
        Sequential model = kerasTwin(buildFirst);
        Optimizer adam = Optimizer.adam(ctx, 0.5);
        Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", model, "optimizer", adam));
        RestoreStatus status = ckpt.restore(prefix)) {
      assertEquals(WeightsFormat.TF, reader.format());
      assertEquals(4, adam.iterations()); // make_golden.py: one epoch of 4 batches
      assertEquals(0.01, adam.learningRate(), 1e-7);
      if (!buildFirst) {
        CairnException pending = assertThrows(CairnException.class, status::assertConsumed);
        assertEquals(Code.FAILED_PRECONDITION, pending.code());
        assertTrue(pending.getMessage().contains(w[0]), pending.getMessage());
        try (Tensor x = Tensor.of(ctx, new float[8], 1, 8)) {
          model.call(x).close(); // the deferred values arrive as the layers build
        }
      }
      List<float[]> got = values(model);
      for (int i = 0; i < 4; ++i) assertArrayEquals(load(reader, ctx, w[i]), got.get(i), w[i]);
      CairnException slots = assertThrows(CairnException.class, status::assertConsumed);
      assertTrue(slots.getMessage().contains(m[0]), slots.getMessage());
      step(model, adam, 0f); // creates m and v from the checkpoint, then scales them by beta_1 and beta_2
      List<Variable> vars = model.trainableWeights();
      try {
        for (int i = 0; i < 4; ++i) {
          try (Variable mi = adam.slot(vars.get(i), "m");
              Variable vi = adam.slot(vars.get(i), "v");
              Tensor mt = mi.read();
              Tensor vt = vi.read()) {
            assertClose(scaled(load(reader, ctx, m[i]), 0.9f), mt.toFloatArray(), m[i]);
            assertClose(scaled(load(reader, ctx, v[i]), 0.999f), vt.toFloatArray(), v[i]);
          }
        }
      } finally {
        vars.forEach(Variable::close);
      }
      status.assertConsumed();
    }
  }

  @Test
  void aKerasGoldenIntoAMismatchedModelNamesTheKeyAndLeavesNoDeferredValues() {
    String prefix = golden("tf_checkpoint/keras3_mlp/ckpt").toString();
    try (Layer d = Layers.dense(ctx, Layers.denseOptions(4));
        Sequential other = Sequential.of(ctx, "other", d);
        Optimizer adam = Optimizer.adam(ctx, 0.5);
        Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", other, "optimizer", adam))) {
      try (Tensor x = Tensor.of(ctx, new float[8], 1, 8)) {
        other.call(x).close();
      }
      CairnException e = assertThrows(CairnException.class, () -> ckpt.restore(prefix));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("optimizer/_trainable_variables/0" + VV + "' is float32[8,16] in the checkpoint"),
          e.getMessage());
    }
  }

  /** A zero variable of `shape`, closed by the caller. */
  private Variable zeros(DType dtype, long... shape) {
    int n = (int) java.util.Arrays.stream(shape).reduce(1, (a, b) -> a * b);
    Object data = dtype == DType.FLOAT64 ? new double[n] : dtype == DType.INT32 ? new int[n]
        : dtype == DType.BOOL ? new boolean[n] : new float[n];
    try (Tensor t = Tensor.of(ctx, dtype, data, shape)) {
      return Variable.create(ctx, t);
    }
  }

  private static float[] floats(Variable v) {
    try (Tensor t = v.read()) {
      return t.toFloatArray();
    }
  }

  @Test
  void theNestedModuleGoldenRestoresThroughItsDirectoryIntoListsAndDicts() {
    // make_golden.py: tf.train.Checkpoint(root=root) saved twice; the `checkpoint` file names
    // ckpt-2, where scalar is 4.5.
    try (Module root = Module.create(ctx, "root");
        ListObject blocks = ListObject.create(ctx);
        DictObject table = DictObject.create(ctx);
        DictObject nested = DictObject.create(ctx);
        ListObject deep = ListObject.create(ctx);
        Variable alpha = zeros(DType.FLOAT32, 2);
        Variable scalar = zeros(DType.FLOAT64);
        Variable deep0 = zeros(DType.INT32);
        Variable deep1 = zeros(DType.BOOL, 1, 2)) {
      for (int i = 0; i < 2; ++i) {
        try (Module b = Module.create(ctx, "block");
            Variable w = zeros(DType.FLOAT32, 2, 3);
            Variable bias = zeros(DType.FLOAT32, 3)) {
          b.set("w", w);
          b.set("b", bias);
          blocks.append(b);
        }
      }
      root.set("blocks", blocks);
      table.set("alpha", alpha);
      nested.set("deep", deep);
      table.set("nested", nested);
      root.set("table", table);
      root.set("scalar", scalar);
      try (Checkpoint ckpt = Checkpoint.create(ctx, "root", root);
          RestoreStatus status = ckpt.restore(golden("tf_checkpoint/nested_module").toString())) {
        assertEquals(2, ckpt.saveCounter());
        try (Tensor t = scalar.read()) {
          assertArrayEquals(new double[] {4.5}, t.toDoubleArray());
        }
        try (Module b1 = blocks.get(1, Module.class);
            Variable w = b1.get("w", Variable.class)) {
          assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, floats(w));
        }
        assertArrayEquals(new float[] {1.5f, 2.5f}, floats(alpha));
        // The deep list's items appear after the restore: deferred, applied on append.
        CairnException pending = assertThrows(CairnException.class, status::assertConsumed);
        assertTrue(pending.getMessage().contains("table/nested/deep/0"), pending.getMessage());
        deep.append(deep0);
        deep.append(deep1);
        try (Tensor t0 = deep0.read();
            Tensor t1 = deep1.read()) {
          assertArrayEquals(new int[] {7}, t0.toIntArray());
          assertArrayEquals(new boolean[] {true, false}, t1.toBooleanArray());
        }
        status.assertConsumed();
      }
    }
  }

  @Test
  void aTf1CheckpointLoadsByNameButDoesNotRestore() {
    String prefix = golden("tf_checkpoint/tf1_saver/model.ckpt").toString();
    try (Module root = Module.create(ctx, "root");
        Module dense = Module.create(ctx, "dense");
        Variable kernel = zeros(DType.FLOAT32, 4, 3);
        Variable bias = zeros(DType.FLOAT32, 3);
        CheckpointReader r = CheckpointReader.open(prefix)) {
      dense.set("kernel", kernel);
      dense.set("bias", bias);
      root.set("dense", dense);
      assertEquals(WeightsFormat.TF, r.format());
      assertFalse(r.keys().contains("_CHECKPOINTABLE_OBJECT_GRAPH"));
      try (Tensor step = r.load(ctx, "global_step")) {
        assertArrayEquals(new long[] {42}, step.toLongArray());
      }
      // Name-based: the 1,100 scalars and the partitioned variable are values no variable takes.
      CairnException unused = assertThrows(CairnException.class, () -> root.loadWeights(prefix));
      assertEquals(Code.INVALID_ARGUMENT, unused.code(), unused.getMessage());
      assertEquals(2, root.loadWeights(prefix, new WeightsOptions().allowUnused(true)));
      assertArrayEquals(load(r, ctx, "dense/kernel"), floats(kernel));
      assertArrayEquals(new float[] {0.5f, -0.5f, 0.25f}, floats(bias));
      try (Checkpoint ckpt = Checkpoint.create(ctx, "root", root)) {
        CairnException e = assertThrows(CairnException.class, () -> ckpt.restore(prefix));
        assertEquals(Code.NOT_FOUND, e.code());
        assertTrue(e.getMessage().contains("a name-based (TF1) checkpoint has no object graph"), e.getMessage());
      }
    }
  }

  private static float[] scaled(float[] x, float by) {
    float[] out = x.clone();
    for (int i = 0; i < out.length; ++i) out[i] *= by;
    return out;
  }

  private static void assertClose(float[] want, float[] got, String what) {
    assertEquals(want.length, got.length, what);
    for (int i = 0; i < want.length; ++i) {
      assertEquals(want[i], got[i], 1e-5 * Math.max(1e-3, Math.abs(want[i])), what + "[" + i + "]");
    }
  }

  private static String sha256(ByteBuffer data) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(data.duplicate());
      return HexFormat.of().formatHex(md.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  private static long[] shapeOf(Object json) {
    return Json.array(json).stream().mapToLong(d -> ((BigDecimal) d).longValueExact()).toArray();
  }

  @ParameterizedTest
  @ValueSource(strings = {"keras3_mlp/ckpt", "dtypes_strings/ckpt"})
  void theTensorFlowGoldensReadAsTensorFlowListsThem(String name) throws IOException {
    Map<String, Object> checkpoints = Json.object(expectedJson("tf_checkpoint").get("checkpoints"));
    Map<String, Object> expected = Json.object(checkpoints.get(name.substring(0, name.indexOf('/'))));
    List<Object> entries = Json.array(expected.get("entries"));
    try (CheckpointReader r = CheckpointReader.open(golden("tf_checkpoint/" + name).toString())) {
      assertEquals(WeightsFormat.TF, r.format());
      assertTrue(r.metadata().isEmpty());
      List<CheckpointReader.Entry> got = r.entries();
      assertEquals(entries.size(), got.size());
      for (int i = 0; i < got.size(); ++i) {
        Map<String, Object> want = Json.object(entries.get(i));
        CheckpointReader.Entry e = got.get(i);
        String key = (String) want.get("key");
        assertEquals(key, e.key());
        assertEquals(want.get("dtype"), e.typeName(), key);
        assertEquals(want.get("dtype"), r.typeName(i), key);
        assertArrayEquals(shapeOf(want.get("shape")), e.shape(), key);
        if (key.equals("_CHECKPOINTABLE_OBJECT_GRAPH")) {
          assertEquals(DType.STRING, e.dtype());
          // expected.json hashes a string as its 8-byte little-endian length, then its bytes.
          byte[] graph = r.loadString(key);
          ByteBuffer framed = ByteBuffer.allocate(8 + graph.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
          framed.putLong(graph.length).put(graph).flip();
          assertEquals(want.get("sha256"), sha256(framed), key);
        } else if (want.containsKey("strings_b64")) {
          assertEquals(DType.STRING, e.dtype(), key);
          List<Object> strings = Json.array(want.get("strings_b64"));
          for (int j = 0; j < strings.size(); ++j) {
            assertArrayEquals(Base64.getDecoder().decode((String) strings.get(j)), r.loadStringElement(key, j), key + "[" + j + "]");
          }
          final int past = strings.size();
          assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class, () -> r.loadStringElement(key, past)).code());
        } else if (e.dtype() == DType.INVALID_DTYPE) { // uint16, complex128: no Cairn dtype
          assertTrue(List.of("uint16", "complex128").contains(e.typeName()), e.typeName());
          CairnException no = assertThrows(CairnException.class, () -> r.load(ctx, key));
          assertTrue(no.getMessage().contains(key), no.getMessage());
        } else {
          assertEquals(e.typeName(), e.dtype().cName(), key);
          try (Tensor t = r.load(ctx, key)) {
            assertEquals(e.dtype(), t.dtype());
            assertArrayEquals(e.shape(), t.shape());
            assertEquals(want.get("sha256"), sha256(t.toByteBuffer()), key);
          }
          assertTrue(r.verify(key), key); // TensorFlow keeps a CRC32C of every value
        }
      }
    }
  }

  /** A tensor's values as doubles (complex as interleaved parts; float16 and bfloat16 widened). */
  private double[] doubles(Tensor t) {
    DType d = t.dtype();
    if (d == DType.FLOAT16 || d == DType.BFLOAT16) {
      try (Tensor wide = Ops.cast(ctx, t, DType.FLOAT32)) {
        return doubles(wide);
      }
    }
    switch (d) {
      case FLOAT32: case COMPLEX64: {
        float[] f = t.toFloatArray();
        double[] out = new double[f.length];
        for (int i = 0; i < f.length; ++i) out[i] = f[i];
        return out;
      }
      case FLOAT64: return t.toDoubleArray();
      case INT32: return java.util.Arrays.stream(t.toIntArray()).asDoubleStream().toArray();
      case INT64: return java.util.Arrays.stream(t.toLongArray()).asDoubleStream().toArray();
      case INT16: {
        short[] s = t.toShortArray();
        double[] out = new double[s.length];
        for (int i = 0; i < s.length; ++i) out[i] = s[i];
        return out;
      }
      case INT8: case UINT8: {
        byte[] b = t.toByteArray();
        double[] out = new double[b.length];
        for (int i = 0; i < b.length; ++i) out[i] = d == DType.UINT8 ? b[i] & 0xff : b[i];
        return out;
      }
      case BOOL: {
        boolean[] b = t.toBooleanArray();
        double[] out = new double[b.length];
        for (int i = 0; i < b.length; ++i) out[i] = b[i] ? 1 : 0;
        return out;
      }
      default: throw new AssertionError("no doubles for " + d);
    }
  }

  /** expected.json's values, flattened (complex pairs interleaved; "nan", "inf" as strings). */
  private static void flatten(Object json, List<Double> out) {
    if (json instanceof List) {
      for (Object o : Json.array(json)) flatten(o, out);
    } else if (json instanceof String) {
      String s = (String) json;
      out.add(s.equals("nan") || s.equals("-nan") ? Double.NaN
          : s.equals("inf") ? Double.POSITIVE_INFINITY : s.equals("-inf") ? Double.NEGATIVE_INFINITY : Double.parseDouble(s));
    } else {
      out.add(((Number) json).doubleValue());
    }
  }

  private static final Map<String, DType> SAFETENSORS_DTYPES = Map.ofEntries(
      Map.entry("BOOL", DType.BOOL), Map.entry("U8", DType.UINT8), Map.entry("I8", DType.INT8),
      Map.entry("I16", DType.INT16), Map.entry("F16", DType.FLOAT16), Map.entry("BF16", DType.BFLOAT16),
      Map.entry("I32", DType.INT32), Map.entry("F32", DType.FLOAT32), Map.entry("C64", DType.COMPLEX64),
      Map.entry("F64", DType.FLOAT64), Map.entry("I64", DType.INT64), Map.entry("F8_E4M3", DType.FLOAT32),
      Map.entry("F8_E5M2", DType.FLOAT32), Map.entry("U16", DType.INVALID_DTYPE),
      Map.entry("U32", DType.INVALID_DTYPE), Map.entry("U64", DType.INVALID_DTYPE));

  @ParameterizedTest
  @ValueSource(strings = {"cairn_dtypes.safetensors", "f8.safetensors", "numpy.safetensors", "unsigned.safetensors",
      "empty.safetensors", "sharded"})
  void theSafetensorsGoldensReadAsThePackageWroteThem(String name) throws IOException {
    Map<String, Object> expected = Json.object(Json.object(expectedJson("safetensors").get("files")).get(name));
    Map<String, Object> tensors = Json.object(expected.get("tensors"));
    Map<String, Object> metadata = expected.get("metadata") == null ? Map.of() : Json.object(expected.get("metadata"));
    try (CheckpointReader r = CheckpointReader.open(golden("safetensors/" + name).toString())) {
      assertEquals(WeightsFormat.SAFETENSORS, r.format());
      assertEquals(metadata, r.metadata());
      // Keys in byte order: UTF-8's order is the code points' order.
      List<String> wantKeys = tensors.keySet().stream()
          .sorted((a, b) -> java.util.Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8)))
          .collect(Collectors.toList());
      assertEquals(wantKeys, r.keys());
      for (CheckpointReader.Entry e : r.entries()) {
        Map<String, Object> want = Json.object(tensors.get(e.key()));
        String type = (String) want.get("dtype");
        assertEquals(type, e.typeName(), e.key());
        assertEquals(SAFETENSORS_DTYPES.get(type), e.dtype(), e.key());
        assertArrayEquals(shapeOf(want.get("shape")), e.shape(), e.key());
        assertFalse(r.verify(e.key()), e.key()); // the package writes no checksums
        if (e.dtype() == DType.INVALID_DTYPE) {
          CairnException no = assertThrows(CairnException.class, () -> r.load(ctx, e.key()));
          assertTrue(no.getMessage().contains(e.key()), no.getMessage());
          continue;
        }
        List<Double> values = new ArrayList<>();
        flatten(want.get("values"), values);
        try (Tensor t = r.load(ctx, e.key())) {
          assertEquals(e.dtype(), t.dtype(), e.key());
          assertArrayEquals(e.shape(), t.shape(), e.key());
          assertArrayEquals(values.stream().mapToDouble(Double::doubleValue).toArray(), doubles(t), e.key());
        }
      }
    }
  }

  @Test
  void aSafetensorsGoldenLoadsIntoAModuleByName() {
    // numpy.safetensors: layer.0.kernel [3,2], layer.0.bias [2], layer.1.bias [3], mask, step.
    try (Module root = Module.create(ctx, "root");
        Module layer0 = Module.create(ctx, "layer0");
        Tensor k = Tensor.of(ctx, new float[6], 3, 2);
        Tensor b = Tensor.of(ctx, new float[2], 2);
        Variable kernel = Variable.create(ctx, k);
        Variable bias = Variable.create(ctx, b);
        CheckpointReader r = CheckpointReader.open(golden("safetensors/numpy.safetensors").toString())) {
      layer0.set("kernel", kernel);
      layer0.set("bias", bias);
      root.set("0", layer0);
      WeightsOptions opts = new WeightsOptions().prefix("layer.").separator(".").allowUnused(true);
      assertEquals(2, root.loadWeights(golden("safetensors/numpy.safetensors").toString(), opts));
      try (Tensor want = r.load(ctx, "layer.0.kernel");
          Tensor got = kernel.read()) {
        assertArrayEquals(want.toFloatArray(), got.toFloatArray());
      }
      try (Tensor want = r.load(ctx, "layer.0.bias");
          Tensor got = bias.read()) {
        assertArrayEquals(want.toFloatArray(), got.toFloatArray());
      }
    }
  }
}
