package dev.cairn;

import static dev.cairn.ClosedAssert.assertClosed;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** tf.train.Example and SequenceExample: build, serialize, parse, read back, and batched parsing into tensors. */
class ExampleProtoTest {
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void closeAll(Tensor[][] ts) {
    for (Tensor[] row : ts) for (Tensor t : row) t.close();
  }

  @Test
  void buildsSerializesAndParses() {
    byte[] bytes;
    try (Example ex = Example.create()) {
      ex.set("label", 7L).set("pixels", 0.5f, 0.25f).set("name", utf8("seven"), new byte[] {0, 1});
      ex.set("empty", new long[0]);
      assertEquals(ExampleKind.EXAMPLE, ex.kind());
      bytes = ex.serialize();
    }
    // Deterministic: keys sorted, lists packed; the same bytes again.
    try (Example ex = Example.parse(ExampleKind.EXAMPLE, bytes)) {
      assertEquals(List.of("empty", "label", "name", "pixels"), ex.keys());
      assertArrayEquals(new long[] {7}, ex.int64s("label"));
      assertArrayEquals(new float[] {0.5f, 0.25f}, ex.floats("pixels"));
      byte[][] names = ex.bytes("name");
      assertEquals(2, names.length);
      assertArrayEquals(utf8("seven"), names[0]);
      assertArrayEquals(new byte[] {0, 1}, names[1]);
      assertEquals(FeatureKind.FLOAT, ex.featureKind("pixels", Example.NO_STEP));
      assertArrayEquals(bytes, ex.serialize());
      CairnException e = assertThrows(CairnException.class, () -> ex.int64s("missing"));
      assertEquals(Code.NOT_FOUND, e.code());
      assertTrue(e.getMessage().contains("missing"), e.getMessage());
      e = assertThrows(CairnException.class, () -> ex.floats("label"));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertEquals(List.of(), ex.featureListKeys());
      assertThrows(CairnException.class, () -> ex.appendStep("x", 1L));
    }
    CairnException e = assertThrows(CairnException.class, () -> Example.parse(ExampleKind.EXAMPLE, new byte[] {10, 50, 1}));
    assertEquals(Code.DATA_LOSS, e.code());
    Example closed = Example.create();
    closed.close();
    assertClosed("FAILED_PRECONDITION: Example.serialize: example is closed", closed::serialize);
  }

  @Test
  void sequenceExampleSteps() {
    byte[] bytes;
    try (Example ex = Example.createSequence()) {
      ex.set("id", 3L);
      ex.appendStep("frames", 1f, 2f).appendStep("frames", 3f);
      ex.appendStep("tokens", 4L, 5L).appendStep("words", utf8("a"), utf8("bc"));
      bytes = ex.serialize();
    }
    try (Example ex = Example.parse(ExampleKind.SEQUENCE_EXAMPLE, bytes)) {
      assertEquals(ExampleKind.SEQUENCE_EXAMPLE, ex.kind());
      assertEquals(List.of("id"), ex.keys());
      assertEquals(List.of("frames", "tokens", "words"), ex.featureListKeys());
      assertEquals(2, ex.steps("frames"));
      assertArrayEquals(new float[] {3f}, ex.floats("frames", 1));
      assertArrayEquals(new long[] {4, 5}, ex.int64s("tokens", 0));
      assertArrayEquals(utf8("bc"), ex.bytes("words", 0)[1]);
      assertEquals(Code.OUT_OF_RANGE, assertThrows(CairnException.class, () -> ex.floats("frames", 2)).code());
      assertEquals(Code.NOT_FOUND, assertThrows(CairnException.class, () -> ex.steps("nope")).code());
    }
  }

  @Test
  void parsesBatchesIntoTensors() {
    List<byte[]> records = new ArrayList<>();
    for (int i = 0; i < 3; ++i) {
      try (Example ex = Example.create()) {
        ex.set("x", i, i + 0.5f).set("tags", new long[i]).set("raw", utf8("ab".repeat(i)));
        if (i != 1) ex.set("label", (long) i);
        records.add(ex.serialize());
      }
    }
    try (Tensor minusOne = Tensor.of(ctx, new long[] {-1})) {
      Tensor[][] out = Example.parseExamples(ctx, records, FeatureSpec.fixedLen("x", DType.FLOAT32, 2),
          FeatureSpec.varLen("tags", DType.INT64), FeatureSpec.fixedLen("label", DType.INT64).withDefault(minusOne),
          FeatureSpec.varLen("raw", DType.UINT8));
      try {
        assertEquals(1, out[0].length);
        assertArrayEquals(new long[] {3, 2}, out[0][0].shape());
        assertArrayEquals(new float[] {0, 0.5f, 1, 1.5f, 2, 2.5f}, out[0][0].toFloatArray());
        assertEquals(2, out[1].length);
        assertArrayEquals(new long[] {0, 0, 0}, out[1][0].toLongArray());
        assertArrayEquals(new long[] {0, 1, 2}, out[1][1].toLongArray());
        assertArrayEquals(new long[] {0, -1, 2}, out[2][0].toLongArray());
        assertArrayEquals(utf8("ababab"), out[3][0].toByteArray());
        assertArrayEquals(new long[] {0, 2, 4}, out[3][1].toLongArray());
      } finally {
        closeAll(out);
      }
    }
    CairnException e = assertThrows(CairnException.class,
        () -> Example.parseExamples(ctx, records, FeatureSpec.fixedLen("label", DType.INT64)));
    assertEquals(Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("label"), e.getMessage());
  }

  @Test
  void parsesSequenceBatches() {
    List<byte[]> records = new ArrayList<>();
    for (int i = 1; i <= 2; ++i) {
      try (Example ex = Example.createSequence()) {
        ex.set("id", (long) i);
        for (int s = 0; s < i; ++s) ex.appendStep("f", (float) s, s).appendStep("v", new long[s + 1]);
        records.add(ex.serialize());
      }
    }
    FeatureSpec[] specs = {FeatureSpec.fixedLen("id", DType.INT64), FeatureSpec.fixedLenSequence("f", DType.FLOAT32, 2),
        FeatureSpec.varLenSequence("v", DType.INT64)};
    assertEquals(3, specs[2].numOutputs());
    Tensor[][] out = Example.parseSequenceExamples(ctx, records, specs);
    try {
      assertArrayEquals(new long[] {1, 2}, out[0][0].toLongArray());
      assertArrayEquals(new long[] {2, 2, 2}, out[1][0].shape());
      assertArrayEquals(new float[] {0, 0, 0, 0, 0, 0, 1, 1}, out[1][0].toFloatArray());
      assertArrayEquals(new long[] {1, 2}, out[1][1].toLongArray());
      assertEquals(3, out[2].length);
      assertArrayEquals(new long[] {1, 1, 2}, out[2][1].toLongArray());
      assertArrayEquals(new long[] {1, 2}, out[2][2].toLongArray());
    } finally {
      closeAll(out);
    }
  }
}
