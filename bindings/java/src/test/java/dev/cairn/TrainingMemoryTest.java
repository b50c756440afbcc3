package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The README's hand-written training step, 10,000 times, on a 256-unit Dense layer over 256 inputs
 * (a 256 KiB kernel, so each step makes about 600 KiB of tensors): resident memory after step
 * 10,000 may exceed that after step 1,000 by at most {@link #GROWTH_LIMIT}, whether the step
 * closes what it makes, leaves it to the backstop, or runs in a {@link TensorScope}. Issue 14:
 * left to the backstop, the step leaked until {@link NativeMemory} started collections; {@link
 * #growsWithTheTriggerOff} shows that. A loop stops as soon as it is over the limit.
 */
class TrainingMemoryTest {
  private static final int STEPS = 10_000;
  private static final int WARMUP = 1_000;
  private static final int UNITS = 256;
  private static final int BATCH = 16;
  private static final long GROWTH_LIMIT = 48L << 20;

  private static long vmRSS() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) << 10;
    }
    throw new IOException("no VmRSS in /proc/self/status");
  }

  private interface Step {
    float run(CairnContext ctx, Layer model, Optimizer opt, Tensor x, Tensor y);
  }

  // Runs STEPS steps; returns the growth of VmRSS from step WARMUP to the end, or to the first
  // check over the limit when stopEarly.
  private static long train(Step step, boolean stopEarly) throws IOException {
    float[] xs = new float[BATCH * UNITS];
    int[] ys = new int[BATCH];
    for (int i = 0; i < xs.length; ++i) xs[i] = (i % 17) / 17f;
    for (int i = 0; i < ys.length; ++i) ys[i] = i % UNITS;
    try (CairnContext ctx = new CairnContext(CairnContext.options().seed(7));
        Layer model = Layers.dense(ctx, UNITS);
        Optimizer opt = Optimizer.adam(ctx, 0.001);
        Tensor x = Tensor.of(ctx, xs, BATCH, UNITS);
        Tensor y = Tensor.of(ctx, ys, BATCH)) {
      long atWarmup = 0;
      float first = 0;
      float last = 0;
      long start = System.nanoTime();
      for (int i = 1; i <= STEPS; ++i) {
        last = step.run(ctx, model, opt, x, y);
        if (i == 1) first = last;
        if (i == WARMUP) atWarmup = vmRSS();
        if (stopEarly && i > WARMUP && i % 500 == 0 && vmRSS() - atWarmup > GROWTH_LIMIT) break;
      }
      long grown = vmRSS() - atWarmup;
      System.out.printf("TrainingMemoryTest: VmRSS %+d KiB from step %d to the end; loss %.4f -> %.4f; %d ms; %d collections%n",
          grown >> 10, WARMUP, first, last, (System.nanoTime() - start) / 1_000_000, NativeMemory.collections());
      assertTrue(last < first, "the loss did not fall: " + first + " -> " + last);
      return grown;
    }
  }

  private static void assertFlat(long grown) {
    assertTrue(grown <= GROWTH_LIMIT, "resident memory grew by " + (grown >> 20) + " MiB after step " + WARMUP
        + " (limit " + (GROWTH_LIMIT >> 20) + " MiB)");
  }

  // The README's step with nothing closed.
  private static float leftToTheBackstop(CairnContext ctx, Layer model, Optimizer opt, Tensor x, Tensor y) {
    GradientTape tape = GradientTape.create(ctx);
    Tensor logits = model.call(x, true);
    Tensor loss = Loss.sparseCategoricalCrossentropy(ctx, y, logits, true);
    List<Variable> weights = model.trainableWeights();
    Tensor[] grads = tape.gradient(loss, weights);
    tape.close();
    opt.applyGradients(grads, weights);
    return loss.toFloatArray()[0];
  }

  @Test
  @Timeout(120)
  void flatWithTheBackstopOnly() throws IOException {
    assertFlat(train(TrainingMemoryTest::leftToTheBackstop, true));
  }

  @Test
  @Timeout(120)
  void flatWithClose() throws IOException {
    assertFlat(train((ctx, model, opt, x, y) -> {
      try (GradientTape tape = GradientTape.create(ctx);
          Tensor logits = model.call(x, true);
          Tensor loss = Loss.sparseCategoricalCrossentropy(ctx, y, logits, true)) {
        List<Variable> weights = model.trainableWeights();
        Tensor[] grads = tape.gradient(loss, weights);
        opt.applyGradients(grads, weights);
        for (Tensor g : grads) g.close();
        weights.forEach(Variable::close);
        return loss.toFloatArray()[0];
      }
    }, true));
  }

  @Test
  @Timeout(120)
  void flatWithATensorScope() throws IOException {
    assertFlat(train(TrainingMemoryTest::inAScope, true));
  }

  // The README's step: the scope is there for what its close frees (hence "try").
  @SuppressWarnings("try")
  private static float inAScope(CairnContext ctx, Layer model, Optimizer opt, Tensor x, Tensor y) {
    try (TensorScope scope = TensorScope.open(); // frees every tensor the step makes
        GradientTape tape = GradientTape.create(ctx)) {
      Tensor logits = model.call(x, true);
      Tensor loss = Loss.sparseCategoricalCrossentropy(ctx, y, logits, true);
      List<Variable> weights = model.trainableWeights();
      opt.applyGradients(tape.gradient(loss, weights), weights);
      return loss.toFloatArray()[0];
    }
  }

  @Test
  @Timeout(120)
  void growsWithTheTriggerOff() throws IOException {
    int old = NativeMemory.setGcPercent(-1);
    try {
      long grown = train(TrainingMemoryTest::leftToTheBackstop, true);
      assertTrue(grown > GROWTH_LIMIT, "flat with the trigger off (" + (grown >> 20) + " MiB): this test shows nothing");
    } finally {
      NativeMemory.setGcPercent(old);
    }
  }
}
