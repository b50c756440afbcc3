package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The four losses (values and gradients) and the Mean and Accuracy metrics. */
class LossMetricTest {
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private static double scalar(Tensor t) {
    assertEquals(0, t.rank());
    return t.toFloatArray()[0];
  }

  @Test
  void regressionLosses() {
    try (Tensor yTrue = Tensor.of(ctx, new float[] {1, 2, 3, 4}, 2, 2);
        Tensor yPred = Tensor.of(ctx, new float[] {1, 4, 2, 4}, 2, 2);
        Tensor mse = Loss.meanSquaredError(ctx, yTrue, yPred);
        Tensor mae = Loss.meanAbsoluteError(ctx, yTrue, yPred);
        Tensor viaKind = Loss.compute(ctx, LossKind.MEAN_SQUARED_ERROR, yTrue, yPred, false)) {
      assertEquals(5.0 / 4, scalar(mse), 1e-6);
      assertEquals(3.0 / 4, scalar(mae), 1e-6);
      assertEquals(scalar(mse), scalar(viaKind));
    }
  }

  @Test
  void crossEntropies() {
    try (Tensor labels = Tensor.of(ctx, new float[] {1, 0}, 2);
        Tensor probs = Tensor.of(ctx, new float[] {0.9f, 0.2f}, 2);
        Tensor logits = Tensor.of(ctx, new float[] {2, -1}, 2);
        Tensor bce = Loss.binaryCrossentropy(ctx, labels, probs, false);
        Tensor bceLogits = Loss.binaryCrossentropy(ctx, labels, logits, true)) {
      assertEquals(-(Math.log(0.9) + Math.log(0.8)) / 2, scalar(bce), 1e-4);
      double p0 = 1 / (1 + Math.exp(-2));
      double p1 = 1 / (1 + Math.exp(1));
      assertEquals(-(Math.log(p0) + Math.log(1 - p1)) / 2, scalar(bceLogits), 1e-5);
    }
    try (Tensor ids = Tensor.of(ctx, new int[] {0, 2}, 2);
        Tensor scores = Tensor.of(ctx, new float[] {1, 0, 0, 0, 0, 1}, 2, 3);
        Tensor probs = Tensor.of(ctx, new float[] {0.5f, 0.25f, 0.25f, 0.1f, 0.1f, 0.8f}, 2, 3);
        Tensor fromLogits = Loss.sparseCategoricalCrossentropy(ctx, ids, scores, true);
        Tensor fromProbs = Loss.sparseCategoricalCrossentropy(ctx, ids, probs, false)) {
      double expected = -Math.log(Math.E / (Math.E + 2));
      assertEquals(expected, scalar(fromLogits), 1e-5);
      assertEquals(-(Math.log(0.5) + Math.log(0.8)) / 2, scalar(fromProbs), 1e-5);
    }
  }

  @Test
  void aTapeDifferentiatesALoss() {
    try (Tensor yTrue = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor yPred = Tensor.of(ctx, new float[] {3, 2}, 2);
        GradientTape tape = GradientTape.create(ctx)) {
      tape.watch(yPred);
      try (Tensor loss = Loss.meanSquaredError(ctx, yTrue, yPred)) {
        Tensor[] g = tape.gradient(loss, yPred);
        try {
          assertArrayEquals(new float[] {2, 0}, g[0].toFloatArray(), 1e-6f); // 2 (pred - true) / n
        } finally {
          g[0].close();
        }
      }
    }
  }

  @Test
  void lossErrors() {
    try (Tensor a = Tensor.of(ctx, new float[] {1, 2, 3}, 3);
        Tensor b = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor scores = Tensor.of(ctx, new float[] {0, 0, 0}, 1, 3)) {
      CairnException e = assertThrows(CairnException.class, () -> Loss.meanSquaredError(ctx, a, b));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertThrows(CairnException.class, () -> Loss.sparseCategoricalCrossentropy(ctx, scores, scores, true));
      assertThrows(NullPointerException.class, () -> Loss.compute(ctx, null, a, a, false));
      assertThrows(NullPointerException.class, () -> Loss.meanAbsoluteError(ctx, a, null));
    }
  }

  @Test
  void meanMetric() {
    try (Metric mean = Metric.mean(ctx);
        Metric named = Metric.mean(ctx, "loss");
        Tensor x = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
        Tensor y = Tensor.scalar(ctx, 10.0)) {
      assertEquals(MetricKind.MEAN, mean.metricKind());
      assertEquals(ObjectKind.TRACKABLE, mean.kind());
      assertEquals(0, mean.result());
      mean.update(x);
      assertEquals(3.5, mean.result(), 1e-12);
      mean.update(y); // a float64 scalar counts once: (21 + 10) / 7
      assertEquals(31.0 / 7, mean.result(), 1e-12);
      CairnException e = assertThrows(CairnException.class, () -> mean.update(x, x));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertEquals("INVALID_ARGUMENT: Metric.update: a mean metric takes one tensor (update(values))", e.getMessage());
      mean.reset();
      assertEquals(0, mean.result());
      // Its state is two float64 variables, so a checkpoint can save it.
      named.update(y);
      assertEquals(2, named.variables().size());
      named.variables().forEach(Variable::close);
    }
  }

  @Test
  void accuracyMetric() {
    try (Metric acc = Metric.accuracy(ctx);
        Metric eq = Metric.create(ctx, MetricKind.ACCURACY, "eq");
        Tensor labels = Tensor.of(ctx, new int[] {0, 2, 1}, 3);
        Tensor scores = Tensor.of(ctx, new float[] {5, 1, 0, 0, 1, 2, 3, 0, 0}, 3, 3);
        Tensor a = Tensor.of(ctx, new int[] {1, 2, 3, 4}, 4);
        Tensor b = Tensor.of(ctx, new int[] {1, 0, 3, 0}, 4)) {
      assertEquals(MetricKind.ACCURACY, acc.metricKind());
      acc.update(labels, scores); // argmax 0, 2, 0: two of three
      assertEquals(2.0 / 3, acc.result(), 1e-12);
      eq.update(a, b);
      assertEquals(0.5, eq.result(), 1e-12);
      CairnException e = assertThrows(CairnException.class, () -> acc.update(labels));
      assertEquals("INVALID_ARGUMENT: Metric.update: an accuracy metric takes yTrue and yPred", e.getMessage());
      acc.reset();
      assertEquals(0, acc.result());
      assertTrue(acc.toString().startsWith("Metric(accuracy"), acc.toString());
    }
  }
}
