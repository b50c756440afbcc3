package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Model: compile, fit, evaluate, predict, train/test on a batch, the built-in callbacks, callbacks
 * written in Java, errors, a one-expression restore into a fresh model, and saving and loading a
 * whole model. A small problem: 96 points in 4 dimensions, labelled by the sign of x0 + x1.
 */
class ModelTest {
  private static final int N = 96;
  private CairnContext ctx;
  private Tensor x;
  private Tensor y;

  @BeforeEach
  void open() {
    ctx = seeded();
    float[] xs = new float[N * 4];
    int[] ys = new int[N];
    Random r = new Random(3);
    for (int i = 0; i < N; ++i) {
      for (int k = 0; k < 4; ++k) xs[i * 4 + k] = (float) r.nextGaussian();
      ys[i] = xs[i * 4] + xs[i * 4 + 1] > 0 ? 1 : 0;
    }
    x = Tensor.of(ctx, xs, N, 4);
    y = Tensor.of(ctx, ys, N);
  }

  @AfterEach
  void close() {
    x.close();
    y.close();
    ctx.close();
    assertEquals(0, CallbackAdapter.live(), "Java callbacks still held by C");
  }

  private static CairnContext seeded() {
    return new CairnContext(CairnContext.options().seed(11));
  }

  /** Dense(8, relu) -> Dense(2) logits, compiled with Adam, sparse crossentropy and accuracy. */
  private static Model model(CairnContext c) {
    try (Layer hidden = Layers.dense(c, Layers.denseOptions(8).activation("relu"));
        Layer logits = Layers.dense(c, 2);
        Optimizer adam = Optimizer.adam(c, 0.05)) {
      return Model.create(c, "net", hidden, logits).compile(adam, "sparse_categorical_crossentropy", "accuracy");
    }
  }

  private static Model.FitOptions quiet(long epochs) {
    return Model.fitOptions().epochs(epochs).batchSize(16).verbose(Verbose.SILENT);
  }

  private static float[] weights(Layer model) {
    List<Variable> ws = model.weights();
    try {
      List<Float> all = new ArrayList<>();
      for (Variable v : ws) {
        try (Tensor t = v.read()) {
          for (float f : t.toFloatArray()) all.add(f);
        }
      }
      float[] out = new float[all.size()];
      for (int i = 0; i < out.length; ++i) out[i] = all.get(i);
      return out;
    } finally {
      ws.forEach(Variable::close);
    }
  }

  @Test
  void fitEvaluatePredict() {
    try (Model model = model(ctx)) {
      History h = model.fit(x, y, quiet(6).validationData(x, y).validationFreq(2));
      assertArrayEquals(new long[] {0, 1, 2, 3, 4, 5}, h.epochs());
      assertEquals(List.of("loss", "accuracy", "val_loss", "val_accuracy"), h.names());
      double[] loss = h.values("loss");
      assertEquals(6, loss.length);
      assertEquals(3, h.values("val_loss").length);
      assertTrue(loss[5] < loss[0] * 0.7, h.toString());
      assertTrue(h.last("accuracy") > 0.85, h.toString());
      CairnException e = assertThrows(CairnException.class, () -> h.values("nope"));
      assertEquals(Code.NOT_FOUND, e.code());

      Logs logs = model.evaluate(x, y);
      assertEquals(List.of("loss", "accuracy"), logs.names());
      assertEquals(logs.value(0), logs.get("loss"));
      assertTrue(logs.get("accuracy") > 0.85, logs.toString());
      assertEquals(Code.NOT_FOUND, assertThrows(CairnException.class, () -> logs.get("val_loss")).code());

      try (Tensor p = model.predict(x); Tensor p8 = model.predict(x, 8)) {
        assertArrayEquals(new long[] {N, 2}, p.shape());
        assertArrayEquals(p.toFloatArray(), p8.toFloatArray());
      }
      try (Tensor xb = Ops.slice(ctx, x, new long[] {0, 0}, 16, 4);
          Tensor yb = Ops.slice(ctx, y, new long[] {0}, 16)) {
        Logs before = model.testOnBatch(xb, yb);
        Logs trained = model.trainOnBatch(xb, yb);
        assertEquals(List.of("loss", "accuracy"), trained.names());
        assertEquals(before.get("loss"), trained.get("loss"), 1e-6);
      }
      // A Model is a Sequential and a Layer: call, summary, weights.
      Sequential s = model;
      assertTrue(s.summary().contains("Model: \"net\""), s.summary());
      assertEquals(4 * 8 + 8 + 8 * 2 + 2, model.countParams());
    }
  }

  @Test
  @SuppressWarnings("try") // the scope is there for its close()
  void runEagerlyGivesTheCompiledBitsAndPredictFollowsTensorScope() {
    float[][] w = new float[2][];
    for (int eager = 0; eager < 2; ++eager) {
      try (CairnContext c = seeded(); Tensor xs = copy(c, x); Tensor ys = copy(c, y);
          Layer hidden = Layers.dense(c, Layers.denseOptions(8).activation("relu"));
          Layer logits = Layers.dense(c, 2);
          Optimizer sgd = Optimizer.sgd(c, 0.1);
          Model model = Model.create(c, null, hidden, logits)) {
        model.compile(Model.compileOptions(sgd, "sparse_categorical_crossentropy").metrics("accuracy")
            .fromLogits(true).runEagerly(eager == 1));
        model.fit(xs, ys, quiet(2).shuffle(false));
        w[eager] = weights(model);
        Tensor p;
        try (TensorScope scope = TensorScope.open()) {
          p = model.predict(xs);
          assertFalse(p.isClosed());
        }
        assertTrue(p.isClosed(), "predict's tensor belongs to the open TensorScope");
      }
    }
    assertArrayEquals(w[0], w[1]);
  }

  @Test
  void fitsADataset() {
    try (Dataset slices = Dataset.fromTensorSlices(ctx, x, y);
        Dataset batches = slices.batch(16);
        Model model = model(ctx)) {
      History h = model.fit(batches, quiet(4).validationData(batches));
      assertEquals(4, h.epochs().length);
      assertTrue(h.values("loss")[3] < h.values("loss")[0], h.toString());
      assertEquals(model.evaluate(batches).get("loss"), h.last("val_loss"), 1e-5);
      try (Tensor p = model.predict(batches)) {
        assertArrayEquals(new long[] {N, 2}, p.shape());
      }
    }
  }

  @Test
  void builtInCallbacksAreMadeAndFreed(@TempDir Path dir) {
    List<BuiltinCallback> all = List.of(
        Callback.modelCheckpoint(ctx, new Callback.ModelCheckpointOptions(dir.resolve("c").toString())
            .maxToKeep(2).monitor("loss").mode(MonitorMode.MIN).saveBestOnly(true).saveFreq(3)),
        Callback.tensorBoard(new Callback.TensorBoardOptions(dir.resolve("tb").toString())
            .updateFreq(2).histogramFreq(1).writeGraph(false).profileBatches(1, 2)),
        Callback.earlyStopping(new Callback.EarlyStoppingOptions().monitor("loss").minDelta(0.1).patience(2)
            .mode(MonitorMode.MIN).baseline(1).restoreBestWeights(true).startFromEpoch(1)),
        Callback.learningRateScheduler((epoch, lr) -> lr),
        Callback.reduceLrOnPlateau(new Callback.ReduceLrOptions().monitor("loss").factor(0.5).patience(1)
            .mode(MonitorMode.MIN).minDelta(0.01).cooldown(1).minLr(1e-4)),
        Callback.csvLogger(new Callback.CsvLoggerOptions(dir.resolve("log.csv").toString()).separator(';')
            .append(true)),
        Callback.backupAndRestore(ctx, new Callback.BackupOptions(dir.resolve("b").toString()).saveFreq(5)
            .deleteCheckpoint(false)));
    try (Model model = model(ctx)) {
      model.fit(x, y, quiet(2).callbacks(all));
    } finally {
      all.forEach(BuiltinCallback::close);
    }
    assertTrue(Files.isDirectory(dir.resolve("tb").resolve("train")));
    assertTrue(Files.isDirectory(dir.resolve("b")));

    // Bad options: errors from the C constructors, naming them.
    CairnException e = assertThrows(CairnException.class,
        () -> Callback.modelCheckpoint(ctx, new Callback.ModelCheckpointOptions(dir.toString()).maxToKeep(0)));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("cairn_callback_model_checkpoint"), e.getMessage());
    e = assertThrows(CairnException.class, () -> Callback.tensorBoard(""));
    assertTrue(e.getMessage().contains("cairn_callback_tensorboard"), e.getMessage());
    e = assertThrows(CairnException.class,
        () -> Callback.reduceLrOnPlateau(new Callback.ReduceLrOptions().factor(1.5)));
    assertTrue(e.getMessage().contains("cairn_callback_reduce_lr_on_plateau"), e.getMessage());
  }

  @Test
  void modelCheckpointCsvLoggerAndTensorBoardWrite(@TempDir Path dir) throws Exception {
    Path csv = dir.resolve("log.csv");
    try (Model model = model(ctx);
        BuiltinCallback ckpt = Callback.modelCheckpoint(ctx,
            new Callback.ModelCheckpointOptions(dir.resolve("ckpt").toString()).maxToKeep(2));
        BuiltinCallback log = Callback.csvLogger(csv.toString());
        BuiltinCallback tb = Callback.tensorBoard(dir.resolve("logs").toString())) {
      model.fit(x, y, quiet(3).callbacks(ckpt, log, tb));
    }
    // Two kept of three: ckpt-2 and ckpt-3.
    try (var files = Files.list(dir.resolve("ckpt"))) {
      List<String> names = files.map(f -> f.getFileName().toString()).sorted().toList();
      assertEquals(List.of("checkpoint", "ckpt-2", "ckpt-3"),
          names.stream().filter(n -> !n.contains(".data")).toList(), names.toString());
    }
    List<String> rows = Files.readAllLines(csv);
    assertEquals("epoch,loss,accuracy", rows.get(0));
    assertEquals(4, rows.size(), rows.toString());
    assertTrue(rows.get(3).startsWith("2,"), rows.toString());
    try (var files = Files.list(dir.resolve("logs").resolve("train"))) {
      assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("events.out.tfevents.")));
    }
  }

  @Test
  void earlyStoppingStops() {
    try (Model model = model(ctx);
        BuiltinCallback stop = Callback.earlyStopping(
            new Callback.EarlyStoppingOptions().monitor("loss").minDelta(100).patience(1))) {
      History h = model.fit(x, y, quiet(10).callbacks(stop));
      assertArrayEquals(new long[] {0, 1}, h.epochs(), h.toString());
    }
  }

  @Test
  void learningRateSchedulerCallsTheLambda() {
    List<String> calls = new ArrayList<>();
    try (Model model = model(ctx);
        BuiltinCallback lr = Callback.learningRateScheduler((epoch, rate) -> {
          calls.add(epoch + ":" + rate);
          return rate / 2;
        })) {
      model.fit(x, y, quiet(3).callbacks(lr));
      // The rates come back from the optimizer's float32 variable.
      assertEquals(List.of("0:0.05", "1:0.025", "2:0.0125"),
          calls.stream().map(s -> s.replaceAll(":(.*)", "") + ":" + (float) Double.parseDouble(s.replaceAll(".*:", "")))
              .toList(), calls.toString());

      // A schedule that throws ends the fit with its message; the cause is the exception.
      try (BuiltinCallback bad = Callback.learningRateScheduler((epoch, rate) -> {
        throw new IllegalStateException("no rate for epoch " + epoch);
      })) {
        CairnException e = assertThrows(CairnException.class, () -> model.fit(x, y, quiet(2).callbacks(bad)));
        assertTrue(e.getMessage().contains("no rate for epoch 0"), e.getMessage());
        assertInstanceOf(IllegalStateException.class, e.getCause());
      }
      // A negative rate: the C library's error.
      try (BuiltinCallback negative = Callback.learningRateScheduler((epoch, rate) -> -1)) {
        CairnException e = assertThrows(CairnException.class, () -> model.fit(x, y, quiet(1).callbacks(negative)));
        assertEquals(Code.INVALID_ARGUMENT, e.code(), e.getMessage());
      }
    }
  }

  /** Records the hooks called, in order. */
  static final class Recorder implements Callback {
    final List<String> calls = new ArrayList<>();
    Model seen;

    @Override
    public void onTrainBegin(Model model) {
      seen = model;
      calls.add("train_begin");
    }

    @Override
    public void onEpochBegin(Model model, long epoch) {
      calls.add("epoch_begin " + epoch);
    }

    @Override
    public void onTrainBatchEnd(Model model, long batch, Logs logs) {
      calls.add("batch_end " + batch + " " + logs.names());
    }

    @Override
    public void onEpochEnd(Model model, long epoch, Logs logs) {
      calls.add("epoch_end " + epoch + " " + logs.names());
    }

    @Override
    public void onTestEnd(Model model, Logs logs) {
      calls.add("test_end " + logs.names());
    }

    @Override
    public void onTrainEnd(Model model, Logs logs) {
      calls.add("train_end");
    }
  }

  @Test
  void javaCallbacksAreCalledInOrder() {
    Recorder rec = new Recorder();
    try (Model model = model(ctx)) {
      model.fit(x, y, Model.fitOptions().epochs(2).batchSize(48).verbose(Verbose.SILENT).validationData(x, y)
          .callbacks(rec));
      assertSame(model, rec.seen);
      assertEquals(List.of("train_begin",
          "epoch_begin 0", "batch_end 0 [loss, accuracy]", "batch_end 1 [loss, accuracy]", "test_end [loss, accuracy]",
          "epoch_end 0 [loss, accuracy, val_loss, val_accuracy]",
          "epoch_begin 1", "batch_end 0 [loss, accuracy]", "batch_end 1 [loss, accuracy]", "test_end [loss, accuracy]",
          "epoch_end 1 [loss, accuracy, val_loss, val_accuracy]",
          "train_end"), rec.calls);
      rec.calls.clear();
      model.evaluate(x, y, Model.evaluateOptions().callbacks(rec));
      assertEquals(List.of("test_end [loss, accuracy]"), rec.calls);
    }
    assertEquals(0, CallbackAdapter.live());
  }

  @Test
  void stopTrainingFromACallback() {
    try (Model model = model(ctx)) {
      Callback stopper = new Callback() {
        @Override
        public void onTrainBatchEnd(Model m, long batch, Logs logs) {
          if (batch == 1) m.stopTraining();
        }
      };
      History h = model.fit(x, y, quiet(5).callbacks(stopper));
      assertArrayEquals(new long[] {0}, h.epochs(), h.toString());
    }
  }

  @Test
  void callbackErrorsEndTheFit() {
    try (Model model = model(ctx)) {
      // A checked exception: the "error returned" of the hook.
      Callback checked = new Callback() {
        @Override
        public void onEpochEnd(Model m, long epoch, Logs logs) throws Exception {
          if (epoch == 1) throw new java.io.IOException("disk full at epoch " + epoch);
        }
      };
      CairnException e = assertThrows(CairnException.class, () -> model.fit(x, y, quiet(5).callbacks(checked)));
      assertTrue(e.getMessage().contains("disk full at epoch 1"), e.getMessage());
      assertInstanceOf(java.io.IOException.class, e.getCause());

      // A CairnException keeps its code.
      Callback coded = new Callback() {
        @Override
        public void onTrainBegin(Model m) {
          throw new CairnException(Code.ABORTED, "not today");
        }
      };
      e = assertThrows(CairnException.class, () -> model.fit(x, y, quiet(1).callbacks(coded)));
      assertEquals(Code.ABORTED, e.code(), e.getMessage());
      assertTrue(e.getMessage().contains("not today"), e.getMessage());

      // An unchecked exception (a bug in the hook) never crosses into C: it becomes an error.
      Callback buggy = new Callback() {
        @Override
        public void onTrainBatchBegin(Model m, long batch) {
          Object o = null;
          o.hashCode();
        }
      };
      e = assertThrows(CairnException.class, () -> model.fit(x, y, quiet(1).callbacks(buggy)));
      assertEquals(Code.UNKNOWN, e.code(), e.getMessage());
      assertInstanceOf(NullPointerException.class, e.getCause());

      // The model is usable afterwards.
      assertEquals(1, model.fit(x, y, quiet(1)).epochs().length);
    }
    assertEquals(0, CallbackAdapter.live());
  }

  @Test
  void badInputNamesTheCFunction() {
    try (Model model = model(ctx);
        Optimizer sgd = Optimizer.sgd(ctx, 0.1);
        Layer dense = Layers.dense(ctx, 2);
        Model uncompiled = Model.of(ctx, dense)) {
      CairnException e = assertThrows(CairnException.class, () -> model.fit(x, y, quiet(0)));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("cairn_model_fit"), e.getMessage());
      e = assertThrows(CairnException.class, () -> uncompiled.fit(x, y, quiet(1)));
      assertEquals(Code.FAILED_PRECONDITION, e.code());
      assertTrue(e.getMessage().contains("cairn_model_fit"), e.getMessage());
      e = assertThrows(CairnException.class, () -> uncompiled.compile(sgd, "hinge"));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("cairn_model_compile") && e.getMessage().contains("hinge"), e.getMessage());
      try (Tensor short_ = Ops.slice(ctx, y, new long[] {0}, 10)) {
        e = assertThrows(CairnException.class, () -> model.evaluate(x, short_));
        assertTrue(e.getMessage().contains("cairn_model_evaluate"), e.getMessage());
      }
    }
  }

  /** The weights after 3 epochs with a backup every 2 batches; {@code failAt} a global batch to fail at (0: none). */
  private static float[] backedUpRun(Path backup, Tensor xs, Tensor ys, CairnContext c, int failAt) {
    try (Model model = model(c);
        BuiltinCallback b = Callback.backupAndRestore(c, new Callback.BackupOptions(backup.toString()).saveFreq(2))) {
      Callback crash = new Callback() {
        int steps;

        @Override
        public void onTrainBatchEnd(Model m, long batch, Logs logs) {
          if (++steps == failAt) throw new IllegalStateException("crash at step " + steps);
        }
      };
      model.fit(xs, ys, quiet(3).seed(4).callbacks(b, crash));
      return weights(model);
    }
  }

  @Test
  void backupAndRestoreResumesToTheSameWeights(@TempDir Path dir) {
    float[] whole;
    try (CairnContext c = seeded(); Tensor xs = copy(c, x); Tensor ys = copy(c, y)) {
      whole = backedUpRun(dir.resolve("a"), xs, ys, c, 0);
    }
    try (CairnContext c = seeded(); Tensor xs = copy(c, x); Tensor ys = copy(c, y)) {
      CairnException e = assertThrows(CairnException.class, () -> backedUpRun(dir.resolve("b"), xs, ys, c, 9));
      assertTrue(e.getMessage().contains("crash at step 9"), e.getMessage());
    }
    assertTrue(Files.isDirectory(dir.resolve("b")));
    try (CairnContext c = seeded(); Tensor xs = copy(c, x); Tensor ys = copy(c, y)) {
      float[] resumed = backedUpRun(dir.resolve("b"), xs, ys, c, 0);
      assertArrayEquals(whole, resumed);
    }
  }

  private static Tensor copy(CairnContext c, Tensor t) {
    if (t.dtype() == DType.INT32) return Tensor.of(c, t.toIntArray(), t.shape());
    return Tensor.of(c, t.toFloatArray(), t.shape());
  }

  @Test
  void oneExpressionRestoreIntoAFreshModel(@TempDir Path dir) {
    String ckptDir = dir.resolve("ckpt").toString();
    try (Model model = model(ctx); Model fresh = model(ctx)) {
      try (BuiltinCallback ckpt = Callback.modelCheckpoint(ctx, ckptDir)) {
        model.fit(x, y, quiet(2).callbacks(ckpt));
      }
      // The checkpoint, its manager and the status are gone before the fresh model is built.
      Checkpoint ck = Checkpoint.create(ctx, "model", fresh);
      CheckpointManager manager = CheckpointManager.create(ck, ckptDir);
      RestoreStatus status = ck.restore(manager.latest()).expectPartial();
      status.close();
      manager.close();
      ck.close();
      try (Tensor a = model.predict(x); Tensor b = fresh.predict(x)) {
        assertArrayEquals(a.toFloatArray(), b.toFloatArray());
      }
      assertArrayEquals(weights(model), weights(fresh));
    }
  }

  @Test
  void saveAndLoadGiveBackTheModelAndItsOptimizer(@TempDir Path dir) {
    String saved = dir.resolve("model").toString();
    try (Model neverCalled = model(ctx)) {
      CairnException e = assertThrows(CairnException.class, () -> neverCalled.save(saved));
      assertEquals(Code.FAILED_PRECONDITION, e.code());
      assertTrue(e.getMessage().contains("cairn_model_save"), e.getMessage());
    }
    try (Model model = model(ctx)) {
      model.fit(x, y, quiet(2));
      model.save(saved);
      try (Model loaded = Model.load(ctx, saved)) {
        try (Tensor want = model.predict(x); Tensor got = loaded.predict(x)) {
          assertArrayEquals(want.toFloatArray(), got.toFloatArray(), "the loaded model predicts differently");
        }
        // One more epoch each: equal weights only if the optimizer's step and slots came back.
        model.fit(x, y, quiet(1).shuffle(false));
        loaded.fit(x, y, quiet(1).shuffle(false));
        assertArrayEquals(weights(model), weights(loaded));
      }
    }
    CairnException e = assertThrows(CairnException.class, () -> Model.load(ctx, dir.resolve("none").toString()));
    assertEquals(Code.NOT_FOUND, e.code());
    assertTrue(e.getMessage().contains("cairn_model_load"), e.getMessage());
  }
}
