package dev.cairn;

import static dev.cairn.ClosedAssert.assertClosed;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every layer factory, Sequential, weights, summary and parameter counts, with their errors. */
class LayersTest {
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext(CairnContext.options().seed(3));
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private static List<String> names(List<Variable> vars) {
    List<String> out = new ArrayList<>();
    for (Variable v : vars) {
      out.add(v.name());
      v.close();
    }
    return out;
  }

  private static float[] ramp(int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; ++i) v[i] = i;
    return v;
  }

  @Test
  void denseBuildsOnItsFirstCall() {
    try (Layer dense = Layers.dense(ctx, Layers.denseOptions(3).activation("relu").name("d"));
        Tensor x = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 2, 3)) {
      assertEquals(ObjectKind.LAYER, dense.kind());
      assertEquals(0, dense.countParams());
      assertTrue(dense.weights().isEmpty());
      try (Tensor y = dense.call(x)) {
        assertArrayEquals(new long[] {2, 3}, y.shape());
        for (float v : y.toFloatArray()) assertTrue(v >= 0); // relu
      }
      assertEquals(12, dense.countParams());
      assertEquals(List.of("d/kernel:0", "d/bias:0"), names(dense.weights()));
      assertEquals(List.of("d/kernel:0", "d/bias:0"), names(dense.trainableWeights()));
    }
  }

  @Test
  void denseOptions() {
    try (Layer ones = Layers.dense(ctx, Layers.denseOptions(2).useBias(false).kernelInitializer("ones"));
        Layer biased = Layers.dense(ctx, Layers.denseOptions(1).kernelInitializer("zeros").biasInitializer("ones"));
        Tensor x = Tensor.of(ctx, new float[] {1, 2}, 1, 2);
        Tensor a = ones.call(x);
        Tensor b = biased.call(x)) {
      assertArrayEquals(new float[] {3, 3}, a.toFloatArray());
      assertEquals(1, ones.weights().size());
      assertArrayEquals(new float[] {1}, b.toFloatArray());
    }
    CairnException e = assertThrows(CairnException.class, () -> Layers.dense(ctx, 0));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("units"), e.getMessage());
    e = assertThrows(CairnException.class, () -> Layers.dense(ctx, Layers.denseOptions(2).activation("nope")));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    e = assertThrows(CairnException.class, () -> Layers.dense(ctx, Layers.denseOptions(2).kernelInitializer("nope")));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
  }

  @Test
  void convolutionAndPooling() {
    try (Layer conv = Layers.conv2d(ctx, Layers.conv2dOptions(4).kernelSize(3, 3).padding("SAME").activation("relu"));
        Layer valid = Layers.conv2d(ctx, 2);
        Layer strided = Layers.conv2d(ctx, Layers.conv2dOptions(1).kernelSize(2, 2).strides(2, 2).useBias(false));
        Layer max = Layers.maxPool2d(ctx);
        Layer avg = Layers.avgPool2d(ctx, Layers.pool2dOptions().poolSize(2, 2).strides(1, 1).padding("VALID"));
        Tensor x = Tensor.of(ctx, ramp(2 * 4 * 4 * 1), 2, 4, 4, 1)) {
      try (Tensor y = conv.call(x)) {
        assertArrayEquals(new long[] {2, 4, 4, 4}, y.shape());
      }
      assertEquals(3 * 3 * 1 * 4 + 4, conv.countParams());
      try (Tensor y = valid.call(x)) {
        assertArrayEquals(new long[] {2, 2, 2, 2}, y.shape());
      }
      try (Tensor y = strided.call(x)) {
        assertArrayEquals(new long[] {2, 2, 2, 1}, y.shape());
      }
      try (Tensor y = max.call(x)) {
        assertArrayEquals(new long[] {2, 2, 2, 1}, y.shape());
        assertArrayEquals(new float[] {5, 7, 13, 15}, java.util.Arrays.copyOf(y.toFloatArray(), 4));
      }
      try (Tensor y = avg.call(x)) {
        assertArrayEquals(new long[] {2, 3, 3, 1}, y.shape());
        assertEquals(2.5f, y.toFloatArray()[0]);
      }
      try (Tensor flat = Tensor.of(ctx, ramp(6), 2, 3)) {
        CairnException e = assertThrows(CairnException.class, () -> conv.call(flat));
        assertEquals(Code.INVALID_ARGUMENT, e.code());
      }
    }
    CairnException e = assertThrows(CairnException.class,
        () -> Layers.maxPool2d(ctx, Layers.pool2dOptions().padding("FULL")));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    e = assertThrows(CairnException.class, () -> Layers.conv2d(ctx, Layers.conv2dOptions(-1)));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
  }

  @Test
  void flattenEmbeddingActivationDropout() {
    try (Layer flatten = Layers.flatten(ctx, "flat");
        Layer emb = Layers.embedding(ctx, 5, 3, "emb");
        Layer softmax = Layers.activation(ctx, "softmax");
        Layer dropout = Layers.dropout(ctx, 0.5, 11, "drop");
        Layer unseeded = Layers.dropout(ctx, 0.25);
        Tensor x = Tensor.of(ctx, ramp(12), 2, 3, 2);
        Tensor ids = Tensor.of(ctx, new int[] {0, 4, 4}, 3)) {
      try (Tensor y = flatten.call(x)) {
        assertArrayEquals(new long[] {2, 6}, y.shape());
      }
      try (Tensor y = emb.call(ids)) {
        assertArrayEquals(new long[] {3, 3}, y.shape());
        float[] v = y.toFloatArray();
        assertArrayEquals(java.util.Arrays.copyOfRange(v, 3, 6), java.util.Arrays.copyOfRange(v, 6, 9));
      }
      assertEquals(List.of("emb/embeddings:0"), names(emb.weights()));
      try (Tensor y = softmax.call(x)) {
        float[] v = y.toFloatArray();
        assertEquals(1, v[0] + v[1], 1e-6);
      }
      try (Tensor same = dropout.call(x, false)) {
        assertArrayEquals(x.toFloatArray(), same.toFloatArray());
      }
      try (Tensor y = dropout.call(x, true)) {
        float[] in = x.toFloatArray();
        float[] out = y.toFloatArray();
        for (int i = 0; i < in.length; ++i) assertTrue(out[i] == 0 || out[i] == 2 * in[i]);
      }
      try (Tensor y = unseeded.call(x, true)) {
        assertArrayEquals(new long[] {2, 3, 2}, y.shape());
      }
      try (Tensor bad = Tensor.of(ctx, new int[] {9}, 1)) {
        assertThrows(CairnException.class, () -> emb.call(bad));
      }
      try (Tensor scalar = Tensor.scalar(ctx, 1f)) { // no batch axis
        assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class, () -> flatten.call(scalar)).code());
      }
    }
    assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class, () -> Layers.dropout(ctx, 1.0)).code());
    assertEquals(Code.INVALID_ARGUMENT,
        assertThrows(CairnException.class, () -> Layers.activation(ctx, "swishy")).code());
    assertEquals(Code.INVALID_ARGUMENT,
        assertThrows(CairnException.class, () -> Layers.embedding(ctx, 0, 3)).code());
  }

  @Test
  void normalization() {
    try (Layer ln = Layers.layerNorm(ctx);
        Layer bn = Layers.batchNorm(ctx, Layers.normOptions().momentum(0.5).epsilon(1e-5).name("bn"));
        Layer plain = Layers.layerNorm(ctx, Layers.normOptions().center(false).scale(false).axis(-1));
        Tensor x = Tensor.of(ctx, new float[] {1, 2, 3, 5, 7, 9}, 2, 3)) {
      try (Tensor y = ln.call(x)) {
        float[] v = y.toFloatArray();
        assertEquals(0, v[0] + v[1] + v[2], 1e-5);
      }
      try (Tensor y = plain.call(x)) {
        assertArrayEquals(new long[] {2, 3}, y.shape());
      }
      assertEquals(0, plain.countParams());
      try (Tensor y = bn.call(x, true)) {
        float[] v = y.toFloatArray();
        assertEquals(0, v[0] + v[3], 1e-4); // normalised over the batch
      }
      assertEquals(
          List.of("bn/gamma:0", "bn/beta:0", "bn/moving_mean:0", "bn/moving_variance:0"), names(bn.weights()));
      assertEquals(List.of("bn/gamma:0", "bn/beta:0"), names(bn.trainableWeights()));
      List<Variable> w = bn.weights();
      try (Tensor mean = w.get(2).read()) {
        assertEquals(1.5f, mean.toFloatArray()[0], 1e-5); // 0.5 * 0 + 0.5 * mean(1, 5)
      } finally {
        for (Variable v : w) v.close();
      }
    }
    assertEquals(Code.INVALID_ARGUMENT,
        assertThrows(CairnException.class, () -> Layers.batchNorm(ctx, Layers.normOptions().epsilon(-1))).code());
  }

  @Test
  void sequentialComposesLayers() {
    try (Layer hidden = Layers.dense(ctx, Layers.denseOptions(4).activation("tanh"));
        Layer out = Layers.dense(ctx, 2);
        Sequential model = Sequential.create(ctx, "net");
        Tensor x = Tensor.of(ctx, ramp(6), 2, 3)) {
      assertSame(model, model.add(hidden).add(out));
      assertEquals(2, model.childCount());
      try (Tensor y = model.call(x, true)) {
        assertArrayEquals(new long[] {2, 2}, y.shape());
      }
      assertEquals(3 * 4 + 4 + 4 * 2 + 2, model.countParams());
      assertEquals(4, model.weights().size());
      String summary = model.summary();
      assertTrue(summary.contains("Model: \"net\""), summary);
      assertTrue(summary.contains("Total params: 26"), summary);
      try (Layer first = model.get("layer-0", Layer.class)) {
        assertTrue(first.sameObject(hidden));
        assertEquals(16, first.countParams());
      }
      CairnException e = assertThrows(CairnException.class, () -> model.add(model));
      assertEquals(Code.INVALID_ARGUMENT, e.code()); // a model inside itself
    }
    try (Sequential empty = Sequential.of(ctx, null);
        Layer d = Layers.dense(ctx, 1);
        Sequential one = Sequential.of(ctx, "one", d)) {
      assertEquals(1, one.childCount());
      assertEquals(0, empty.countParams());
    }
  }

  @Test
  void layerMethodsRejectOtherObjects() {
    try (Trackable t = Trackable.create(ctx);
        Tensor x = Tensor.scalar(ctx, 1f)) {
      // Only the raw layer can hand a non-layer to cairn_layer_call.
      CairnException e = assertThrows(CairnException.class,
          () -> CairnNative.layerCall(t.handle(), x.handle(), 0));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("expected a layer"), e.getMessage());
    }
    Layer closed = Layers.flatten(ctx);
    closed.close();
    assertClosed("FAILED_PRECONDITION: Layer.summary: layer is closed", closed::summary);
  }
}
