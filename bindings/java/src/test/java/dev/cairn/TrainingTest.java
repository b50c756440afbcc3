package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** End to end: a training loop, and checkpoints of layers, optimizers and metrics. */
class TrainingTest {
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext(CairnContext.options().seed(5));
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  /** One SGD step of mean squared error; returns the loss. */
  private double step(Layer model, Optimizer opt, Tensor x, Tensor y) {
    try (GradientTape tape = GradientTape.create(ctx);
        Tensor pred = model.call(x, true);
        Tensor loss = Loss.meanSquaredError(ctx, y, pred)) {
      List<Variable> weights = model.trainableWeights();
      Tensor[] grads = tape.gradient(loss, weights);
      try {
        opt.applyGradients(grads, weights);
      } finally {
        for (Tensor g : grads) g.close();
        weights.forEach(Variable::close);
      }
      return loss.toFloatArray()[0];
    }
  }

  private static float[] values(Variable v) {
    try (Tensor t = v.read()) {
      return t.toFloatArray();
    }
  }

  @Test
  void fitsALine() {
    float[] xs = {-2, -1, 0, 1, 2, 3};
    float[] ys = new float[xs.length];
    for (int i = 0; i < xs.length; ++i) ys[i] = 2 * xs[i] + 1;
    try (Layer dense = Layers.dense(ctx, Layers.denseOptions(1).name("line"));
        Optimizer sgd = Optimizer.sgd(ctx, 0.05);
        Tensor x = Tensor.of(ctx, xs, xs.length, 1);
        Tensor y = Tensor.of(ctx, ys, ys.length, 1)) {
      double first = step(dense, sgd, x, y);
      double last = first;
      for (int i = 0; i < 300; ++i) last = step(dense, sgd, x, y);
      assertTrue(last < first / 100, "loss went from " + first + " to " + last);
      assertTrue(last < 1e-4, "final loss " + last);
      assertEquals(301, sgd.iterations());
      List<Variable> w = dense.weights();
      try {
        assertEquals(2, values(w.get(0))[0], 1e-2); // kernel
        assertEquals(1, values(w.get(1))[0], 1e-2); // bias
      } finally {
        w.forEach(Variable::close);
      }
    }
  }

  @Test
  void checkpointRoundTripWithOptimizerSlots(@TempDir Path dir) {
    float[] xv = {1, 2, 3, 4};
    float[] yv = {3, 5, 7, 9};
    String path;
    float[] kernelAfterSave;
    float[] mAfterSave;
    float[] kernelAfterNextStep;
    // Train two steps with Adam, save, then take one more step to know where it leads.
    try (Layer model = Layers.dense(ctx, Layers.denseOptions(1).name("d"));
        Optimizer adam = Optimizer.adam(ctx, 0.1);
        Metric loss = Metric.mean(ctx, "loss");
        Tensor x = Tensor.of(ctx, xv, 4, 1);
        Tensor y = Tensor.of(ctx, yv, 4, 1);
        Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", model, "optimizer", adam, "loss", loss))) {
      try (Tensor l = Tensor.scalar(ctx, (float) step(model, adam, x, y))) {
        loss.update(l);
      }
      step(model, adam, x, y);
      path = ckpt.save(dir.resolve("ckpt").toString());
      try (Variable kernel = model.weights().get(0);
          Variable m = adam.slot(kernel, "m")) {
        kernelAfterSave = values(kernel);
        mAfterSave = values(m);
        step(model, adam, x, y);
        kernelAfterNextStep = values(kernel);
      }
      model.weights().get(1).close();
    }
    try (CheckpointReader reader = CheckpointReader.open(path)) {
      List<String> keys = reader.keys();
      assertTrue(keys.contains("model/kernel/.ATTRIBUTES/VARIABLE_VALUE"), keys.toString());
      assertTrue(keys.contains("model/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"), keys.toString());
      assertTrue(keys.contains("optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE"), keys.toString());
      assertTrue(keys.contains("loss/total/.ATTRIBUTES/VARIABLE_VALUE"), keys.toString());
    }
    // A fresh model and optimizer, restored before the layer is built: the values arrive as the
    // variables and slots appear.
    try (Layer model = Layers.dense(ctx, Layers.denseOptions(1).name("d"));
        Optimizer adam = Optimizer.adam(ctx, 0.1);
        Metric loss = Metric.mean(ctx, "loss");
        Tensor x = Tensor.of(ctx, xv, 4, 1);
        Tensor y = Tensor.of(ctx, yv, 4, 1);
        Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", model, "optimizer", adam, "loss", loss));
        RestoreStatus status = ckpt.restore(path)) {
      assertEquals(2, adam.iterations());
      assertTrue(loss.result() > 0);
      try (Tensor out = model.call(x)) {
        assertArrayEquals(new long[] {4, 1}, out.shape());
      }
      List<Variable> w = model.weights();
      try {
        assertArrayEquals(kernelAfterSave, values(w.get(0)));
        step(model, adam, x, y); // creates the slots, which take their saved values first
        try (Variable m = adam.slot(w.get(0), "m")) {
          assertNotNull(m);
          assertEquals(3, adam.iterations());
        }
        assertArrayEquals(kernelAfterNextStep, values(w.get(0)), 1e-6f);
        status.assertConsumed();
      } finally {
        w.forEach(Variable::close);
      }
    }
    assertNotNull(mAfterSave);
  }

  @Test
  void sequentialCheckpointKeysAndManager(@TempDir Path dir) {
    try (Layer hidden = Layers.dense(ctx, Layers.denseOptions(3).activation("relu").name("h"));
        Layer norm = Layers.batchNorm(ctx, Layers.normOptions().name("bn"));
        Sequential model = Sequential.of(ctx, "mlp", hidden, norm);
        Optimizer opt = Optimizer.create(ctx, Optimizer.options().kind(OptimizerKind.RMSPROP).momentum(0.5));
        Tensor x = Tensor.of(ctx, new float[] {1, 2, 3, 4}, 2, 2);
        Tensor target = Tensor.of(ctx, new float[] {0, 1, 1, 0, 1, 0}, 2, 3);
        Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", model, "opt", opt));
        CheckpointManager manager = CheckpointManager.create(ckpt, dir.toString())) {
      step(model, opt, x, target);
      String path = manager.save();
      try (CheckpointReader reader = CheckpointReader.open(path)) {
        List<String> keys = reader.keys();
        assertTrue(keys.contains("model/layer-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"), keys.toString());
        assertTrue(keys.contains("model/layer-1/moving_mean/.ATTRIBUTES/VARIABLE_VALUE"), keys.toString());
        assertTrue(keys.contains("model/layer-0/kernel/.OPTIMIZER_SLOT/opt/rms/.ATTRIBUTES/VARIABLE_VALUE"),
            keys.toString());
        assertTrue(keys.contains("model/layer-0/kernel/.OPTIMIZER_SLOT/opt/momentum/.ATTRIBUTES/VARIABLE_VALUE"),
            keys.toString());
      }
      try (Optimizer again = ckpt.root().get("opt", Optimizer.class)) {
        assertEquals(1, again.iterations());
      }
      try (Layer again = ckpt.root().get("model", Layer.class)) {
        assertEquals(model.countParams(), again.countParams());
      }
    }
  }
}
