package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deferred restores outlive the checkpoint and its status, as in TensorFlow's one expression
 * {@code Checkpoint(model=fresh, optimizer=opt).restore(path).expect_partial()}: both are closed
 * before the model is built and the optimizer's slots are created, and those still get the saved
 * values, bit for bit.
 */
class PendingRestoreTest {
  private final List<String> messages = new CopyOnWriteArrayList<>();
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext(CairnContext.options().seed(5).logHandler((level, message) -> messages.add(message)));
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private static final float[] BATCH = {0.5f, -1, 2, 0.25f, -0.75f, 1.5f, 0, 1};

  /** A two-layer Sequential, not built yet. */
  private Sequential model(String init) {
    try (Layer hidden =
            Layers.dense(
                ctx, Layers.denseOptions(3).activation("tanh").kernelInitializer(init).biasInitializer(init));
        Layer out = Layers.dense(ctx, Layers.denseOptions(2).kernelInitializer(init).biasInitializer(init))) {
      return Sequential.of(ctx, "net", hidden, out);
    }
  }

  /** Calls the model on a fixed batch (the first call builds it). */
  private void call(Layer model) {
    try (Tensor x = Tensor.of(ctx, BATCH, 2, 4);
        Tensor y = model.call(x)) {
      assertArrayEquals(new long[] {2, 2}, y.shape());
    }
  }

  /** One Adam step with fixed gradients that depend on {@code step}. */
  private void step(Layer model, Optimizer opt, int step) {
    List<Variable> weights = model.trainableWeights();
    Tensor[] grads = new Tensor[weights.size()];
    try {
      for (int i = 0; i < grads.length; ++i) {
        try (Tensor value = weights.get(i).read()) {
          float[] g = new float[value.toFloatArray().length];
          for (int j = 0; j < g.length; ++j) g[j] = 0.1f * (step + 1) * (j % 5 - 2) + 0.01f * i;
          grads[i] = Tensor.of(ctx, g, value.shape());
        }
      }
      opt.applyGradients(grads, weights);
    } finally {
      for (Tensor g : grads) if (g != null) g.close();
      weights.forEach(Variable::close);
    }
  }

  private static float[] values(Variable v) {
    try (Tensor t = v.read()) {
      return t.toFloatArray();
    }
  }

  /** Every weight's value, then (with slots) Adam's m and v of each. */
  private static List<float[]> state(Layer model, Optimizer opt, boolean slots) {
    List<float[]> out = new ArrayList<>();
    List<Variable> weights = model.trainableWeights();
    try {
      for (Variable w : weights) out.add(values(w));
      for (String name : slots ? List.of("m", "v") : List.<String>of()) {
        for (Variable w : weights) {
          try (Variable slot = opt.slot(w, name)) {
            out.add(values(slot));
          }
        }
      }
    } finally {
      weights.forEach(Variable::close);
    }
    return out;
  }

  private static void assertSameState(List<float[]> want, List<float[]> got) {
    assertEquals(want.size(), got.size());
    for (int i = 0; i < want.size(); ++i) assertArrayEquals(want.get(i), got.get(i), "entry " + i);
  }

  @Test
  void aRestoreWhoseCheckpointAndStatusAreClosedReachesAModelBuiltLater(@TempDir Path dir) {
    String path = dir.resolve("ckpt").toString();
    List<float[]> saved;
    List<float[]> nextStep;
    try (Sequential trained = model("glorot_uniform");
        Optimizer opt = Optimizer.adam(ctx, 0.05)) {
      call(trained);
      step(trained, opt, 0);
      step(trained, opt, 1);
      try (Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", trained, "optimizer", opt))) {
        ckpt.write(path);
      }
      saved = state(trained, opt, true);
      step(trained, opt, 2);
      nextStep = state(trained, opt, true);
    }

    try (Sequential fresh = model("ones");
        Optimizer opt = Optimizer.adam(ctx, 0.05)) {
      // Checkpoint(model=fresh, optimizer=opt).restore(path).expect_partial(), both closed at once.
      try (Checkpoint ckpt = Checkpoint.create(ctx, Map.of("model", fresh, "optimizer", opt));
          RestoreStatus status = ckpt.restore(path)) {
        status.expectPartial();
      }
      assertEquals(2, opt.iterations());
      call(fresh); // builds the layers: their weights take the saved values as they appear
      List<float[]> weights = state(fresh, opt, false);
      assertSameState(saved.subList(0, weights.size()), weights);
      step(fresh, opt, 2); // creates the slots: restored on creation, then updated
      assertSameState(nextStep, state(fresh, opt, true));
    }
    assertTrue(messages.stream().noneMatch(m -> m.contains("never restored")), messages.toString());
  }

  @Test
  void theWarningComesWhenTheLastWaitingObjectIsClosed(@TempDir Path dir) {
    String path = dir.resolve("ckpt").toString();
    try (Sequential trained = model("glorot_uniform")) {
      call(trained);
      try (Checkpoint ckpt = Checkpoint.create(ctx, "model", trained)) {
        ckpt.write(path);
      }
    }
    Sequential fresh = model("ones");
    try (Checkpoint ckpt = Checkpoint.create(ctx, "model", fresh);
        RestoreStatus status = ckpt.restore(path)) {
      assertNotNull(status);
    }
    // The model may still be built: nothing is reported while it waits.
    assertTrue(messages.stream().noneMatch(m -> m.contains("never restored")), messages.toString());
    fresh.close(); // it never was: now the values can never be restored, and the warning says so
    assertTrue(
        messages.stream().anyMatch(m -> m.contains("never restored") && m.contains("model/layer-0/kernel")),
        messages.toString());
  }
}
