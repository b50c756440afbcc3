package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Input pipelines: sources, transformations, Java callbacks on worker threads, iterators, state. */
class DatasetTest {
  @TempDir Path dir;
  CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext(CairnContext.options().seed(3));
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  // The first component of every remaining element, as a long (a scalar of any integer dtype).
  private static List<Long> values(DatasetIterator it) {
    List<Long> out = new ArrayList<>();
    for (Element e : it) {
      try (e) {
        out.add(firstValue(e.get(0)));
      }
    }
    return out;
  }

  private static long firstValue(Tensor t) {
    switch (t.dtype()) {
      case INT32:
        return t.toIntArray()[0];
      case FLOAT32:
        return (long) t.toFloatArray()[0];
      default:
        return t.toLongArray()[0];
    }
  }

  private static List<Long> values(Dataset ds) {
    try (DatasetIterator it = ds.iterate()) {
      return values(it);
    }
  }

  private static List<Long> range(long start, long stop) {
    List<Long> out = new ArrayList<>();
    for (long i = start; i < stop; ++i) out.add(i);
    return out;
  }

  private static String text(Tensor t) {
    return new String(t.toByteArray(), StandardCharsets.UTF_8);
  }

  @Test
  void rangeMapBatchShuffleRepeatPrefetch() {
    try (Dataset r = Dataset.range(ctx, 0, 10);
        Dataset sq = r.map("square", (c, e) -> new Tensor[] {Ops.mul(c, e.get("value"), e.get(0))},
            Dataset.mapOptions().outputs("sq"));
        Dataset batches = sq.batch(4);
        Dataset shuffled = r.shuffle(10, 42);
        Dataset twice = shuffled.repeat(2);
        Dataset fixedOrder = r.shuffle(10, 42, false);
        Dataset fixedTwice = fixedOrder.repeat(2);
        Dataset prefetched = fixedTwice.prefetch(2)) {
      assertEquals(List.of("value"), r.names());
      assertEquals("value: int64[]", r.components().get(0).toString());
      assertEquals(10, r.cardinality());
      assertEquals(List.of("sq"), sq.names());
      assertEquals(3, batches.cardinality());
      assertEquals(20, twice.cardinality());
      assertTrue(prefetched.describe().contains("shuffle"), prefetched.describe());
      try (DatasetIterator it = batches.iterate()) {
        List<long[]> got = new ArrayList<>();
        for (Element e : it) {
          try (e) {
            assertArrayEquals(new long[] {e.get(0).shape()[0]}, new long[] {e.get("sq").toLongArray().length});
            got.add(e.get(0).toLongArray());
          }
        }
        assertArrayEquals(new long[] {0, 1, 4, 9}, got.get(0));
        assertArrayEquals(new long[] {16, 25, 36, 49}, got.get(1));
        assertArrayEquals(new long[] {64, 81}, got.get(2)); // the smaller last batch
      }
      List<Long> all = values(twice);
      assertEquals(20, all.size());
      List<Long> first = new ArrayList<>(all.subList(0, 10));
      List<Long> second = new ArrayList<>(all.subList(10, 20));
      assertNotEquals(range(0, 10), first, "shuffled");
      assertNotEquals(first, second, "each pass has its own order");
      first.sort(null);
      second.sort(null);
      assertEquals(range(0, 10), first);
      assertEquals(range(0, 10), second);
      // Without reshuffling, both passes (and every iterator) share one order; prefetch changes
      // nothing but timing.
      List<Long> fixed = values(fixedTwice);
      assertEquals(fixed.subList(0, 10), fixed.subList(10, 20));
      assertEquals(fixed, values(prefetched));
    }
  }

  @Test
  void tensorSlicesByNameAndOtherTransformations() {
    Map<String, Tensor> m = new LinkedHashMap<>();
    try (Tensor x = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 3, 2);
        Tensor y = Tensor.of(ctx, new int[] {7, 8, 9}, 3)) {
      m.put("x", x);
      m.put("y", y);
      try (Dataset ds = Dataset.fromTensorSlices(ctx, m);
          Dataset one = Dataset.fromTensors(ctx, x);
          Dataset en = ds.enumerate(100);
          Dataset sel = ds.select(List.of("y"), List.of("label"));
          Dataset zipped = Dataset.zip(sel, Dataset.range(ctx, 0, 2));
          Dataset twice = sel.concatenate(sel);
          Dataset mid = twice.skip(2).take(3);
          Dataset sharded = twice.shard(2, 1);
          Dataset unbatched = one.unbatch();
          Dataset cached = sel.cache(null)) {
        assertEquals("[x: float32[2], y: int32[]]", ds.components().toString());
        try (DatasetIterator it = ds.iterate(); Element e = it.getNext()) {
          assertEquals(List.of("x", "y"), e.names());
          assertArrayEquals(new float[] {1, 2}, e.get("x").toFloatArray());
          assertEquals(7, e.get("y").toIntArray()[0]);
          assertEquals(1, it.position());
        }
        assertEquals(List.of("index", "x", "y"), en.names());
        assertEquals(List.of(100L, 101L, 102L), values(en));
        assertEquals(List.of(7L, 8L, 9L), values(sel));
        assertEquals(List.of("label", "value"), zipped.names());
        assertEquals(2, zipped.cardinality(), "the shortest input");
        assertEquals(List.of(9L, 7L, 8L), values(mid));
        assertEquals(List.of(8L, 7L, 9L), values(sharded));
        assertEquals(List.of(1L, 3L, 5L), values(unbatched));
        assertEquals(List.of(7L, 8L, 9L), values(cached));
        assertEquals(List.of(7L, 8L, 9L), values(cached));
      }
    }
  }

  @Test
  void paddedBatch() {
    // Generator elements [0], [1, 1], [2, 2, 2] padded to the batch's longest with -1.
    try (Dataset gen = Dataset.fromGenerator(ctx, List.of(Dataset.Component.of("v", DType.INT64, -1)),
            (c, i) -> {
              if (i == 3) return null;
              long[] v = new long[(int) i + 1];
              Arrays.fill(v, i);
              return new Tensor[] {Tensor.of(c, v, v.length)};
            });
        Tensor pad = Tensor.scalar(ctx, -1L);
        Dataset padded = gen.paddedBatch(3, false, null, List.of(pad));
        DatasetIterator it = padded.iterate();
        Element e = it.getNext()) {
      assertArrayEquals(new long[] {3, 3}, e.get(0).shape());
      assertArrayEquals(new long[] {0, -1, -1, 1, 1, -1, 2, 2, 2}, e.get(0).toLongArray());
    }
  }

  @Test
  void csvFromATempFile() throws Exception {
    Path csv = dir.resolve("people.csv");
    Files.writeString(csv, "name,age,score\nada,36,1.5\n\"b,ob\",,2.25\ncy,7,\n");
    try (Dataset ds = Dataset.csv(ctx, List.of(csv.toString()),
            Dataset.csvOptions(DType.STRING, DType.INT32, DType.FLOAT32).header(true).columnDefaults(null, "-1", "0"));
        DatasetIterator it = ds.iterate()) {
      assertEquals("[name: uint8[-1], age: int32[], score: float32[]]", ds.components().toString());
      List<String> rows = new ArrayList<>();
      for (Element e : it) {
        try (e) {
          rows.add(text(e.get("name")) + " " + e.get("age").toIntArray()[0] + " " + e.get("score").toFloatArray()[0]);
        }
      }
      assertEquals(List.of("ada 36 1.5", "b,ob -1 2.25", "cy 7 0.0"), rows);
    }
    Path bad = dir.resolve("bad.csv");
    Files.writeString(bad, "1\nx\n3\n");
    try (Dataset ds = Dataset.csv(ctx, List.of(bad.toString()), Dataset.csvOptions(DType.INT64));
        DatasetIterator it = ds.iterate()) {
      assertEquals(1L, firstValue(it.getNext().take(0)));
      CairnException e = assertThrows(CairnException.class, it::getNext);
      assertEquals(Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains(bad + ":2"), e.getMessage());
      assertEquals(List.of(3L), values(it), "the iterator continues after the bad line");
    }
  }

  @Test
  void textLinesListFilesAndTfrecord() throws Exception {
    Path a = dir.resolve("a.txt");
    Files.writeString(a, "one\ntwo\n");
    List<byte[]> records = List.of("r0".getBytes(), new byte[0], "record two".getBytes());
    Path tf = dir.resolve("data.tfrecord");
    try (RecordWriter w = RecordWriter.open(tf.toString())) {
      for (byte[] r : records) w.write(r);
    }
    try (Dataset lines = Dataset.textLines(ctx, a.toString());
        Dataset files = Dataset.listFiles(ctx, List.of(dir + "/*.t*"), false, 0);
        Dataset recs = Dataset.tfrecord(ctx, List.of(tf.toString()), Dataset.tfrecordOptions().bufferSize(1 << 16))) {
      assertEquals(List.of("line"), lines.names());
      try (DatasetIterator it = lines.iterate()) {
        assertEquals(List.of("one", "two"), it.stream().map(e -> {
          try (e) {
            return text(e.get(0));
          }
        }).collect(Collectors.toList()));
      }
      try (DatasetIterator it = files.iterate()) {
        assertEquals(List.of(a.toString(), tf.toString()),
            it.stream().map(e -> text(e.take(0))).collect(Collectors.toList()));
      }
      try (DatasetIterator it = recs.iterate()) {
        List<byte[]> got = new ArrayList<>();
        for (Element e : it) {
          try (e) {
            got.add(e.get("record").toByteArray());
          }
        }
        assertEquals(records.size(), got.size());
        for (int i = 0; i < got.size(); ++i) assertArrayEquals(records.get(i), got.get(i));
      }
    }
  }

  @Test
  void tfrecordOfExamplesParsedInThePipeline() {
    Path tf = dir.resolve("examples.tfrecord");
    try (RecordWriter w = RecordWriter.open(tf.toString())) {
      for (long i = 0; i < 4; ++i) {
        try (Example ex = Example.create()) {
          long[] ids = new long[(int) i];
          Arrays.fill(ids, i);
          ex.set("label", i).set("pixels", 0.5f * i, 1f).set("ids", ids);
          w.write(ex.serialize());
        }
      }
    }
    try (Dataset recs = Dataset.tfrecord(ctx, List.of(tf.toString()), null);
        Dataset parsed = recs.parseExample("record", FeatureSpec.fixedLen("label", DType.INT64),
            FeatureSpec.fixedLen("pixels", DType.FLOAT32, 2), FeatureSpec.varLen("ids", DType.INT64));
        Dataset onDevice = parsed.prefetchToDevice("cpu", 2);
        DatasetIterator it = onDevice.iterate()) {
      assertEquals(List.of("label", "pixels", "ids/indices", "ids/values"), parsed.names());
      List<String> rows = new ArrayList<>();
      for (Element e : it) {
        try (e) {
          rows.add(e.get("label").toLongArray()[0] + " " + Arrays.toString(e.get("pixels").toFloatArray()) + " "
              + Arrays.toString(e.get("ids/values").toLongArray()));
        }
      }
      assertEquals(List.of("0 [0.0, 1.0] []", "1 [0.5, 1.0] [1]", "2 [1.0, 1.0] [2, 2]", "3 [1.5, 1.0] [3, 3, 3]"),
          rows);
    }
  }

  @Test
  void generatorAndEndOfData() {
    List<Dataset.Component> spec = List.of(Dataset.Component.of("n", DType.INT64));
    try (Dataset gen = Dataset.fromGenerator(ctx, spec, (c, i) -> i < 5 ? new Tensor[] {Tensor.scalar(c, i * 10)} : null);
        DatasetIterator it = gen.iterate()) {
      assertEquals(spec, gen.components());
      assertEquals(List.of(0L, 10L, 20L, 30L, 40L), values(it));
      assertNull(it.getNext(), "end of data");
      assertNull(it.getNext(), "and again");
      assertFalse(it.iterator().hasNext());
      assertEquals(5, it.position());
      it.stop();
      assertEquals(Code.FAILED_PRECONDITION, assertThrows(CairnException.class, it::getNext).code());
    }
  }

  @Test
  void interleave() {
    // TF's example: range(1, 4).interleave(x -> from x repeated, cycle 2, block 2)-like, with ranges.
    try (Dataset in = Dataset.range(ctx, 0, 3);
        Dataset out = in.interleave((c, e) -> {
              long x = e.get(0).toLongArray()[0];
              return Dataset.range(c, 10 * x, 10 * x + 2);
            }, List.of(Dataset.Component.of("value", DType.INT64)),
            Dataset.interleaveOptions().cycleLength(3).blockLength(1))) {
      assertEquals(List.of(0L, 10L, 20L, 1L, 11L, 21L), values(out));
    }
  }

  @Test
  void parallelCallbacksOnWorkerThreadsKeepTheOrder() {
    Set<String> threads = ConcurrentHashMap.newKeySet();
    String me = Thread.currentThread().getName();
    try (Dataset r = Dataset.range(ctx, 0, 200);
        Dataset plus = r.map("plus_one", (c, e) -> {
              threads.add(Thread.currentThread().getName());
              try (Tensor one = Tensor.scalar(c, 1L)) {
                return new Tensor[] {Ops.add(c, e.get(0), one)};
              }
            }, Dataset.mapOptions().compile(false).numParallelCalls(4)
                .outputSpecs(Dataset.Component.of("v", DType.INT64)));
        Dataset odd = plus.filter("odd", (c, e) -> {
              try (Tensor two = Tensor.scalar(c, 2L); Tensor one = Tensor.scalar(c, 1L);
                  Tensor mod = Ops.floorMod(c, e.get("v"), two)) {
                return Ops.equal(c, mod, one);
              }
            })) {
      assertEquals(range(1, 201), values(plus));
      assertEquals(range(1, 201), values(plus), "deterministic");
      List<Long> odds = new ArrayList<>();
      for (long i = 1; i <= 200; i += 2) odds.add(i);
      assertEquals(odds, values(odd));
      assertEquals(Dataset.UNKNOWN_CARDINALITY, odd.cardinality());
      threads.remove(me);
      assertFalse(threads.isEmpty(), "the map ran on worker threads");
      assertEquals(Set.of("cairn worker"), threads, "attached under one name");
    }
  }

  @Test
  void aThrowingCallbackFailsItsElementOnly() {
    try (Dataset r = Dataset.range(ctx, 0, 6);
        Dataset m = r.map("boom", (c, e) -> {
              long v = e.get(0).toLongArray()[0];
              if (v == 3) throw new IllegalStateException("no threes");
              if (v == 4) throw new StackOverflowError("deep"); // an Error too becomes a status
              return new Tensor[] {Tensor.scalar(c, v)};
            }, Dataset.mapOptions().compile(false).numParallelCalls(4)
                .outputSpecs(Dataset.Component.of("v", DType.INT64)));
        DatasetIterator it = m.iterate()) {
      List<Long> got = new ArrayList<>();
      List<String> errors = new ArrayList<>();
      java.util.Iterator<Element> view = it.iterator();
      while (view.hasNext()) {
        try (Element e = view.next()) {
          got.add(e.get(0).toLongArray()[0]);
        } catch (CairnException e) {
          errors.add(e.getMessage());
        }
      }
      assertEquals(List.of(0L, 1L, 2L, 5L), got);
      assertEquals(2, errors.size(), errors.toString());
      assertTrue(errors.get(0).contains("map 'boom' (element 3)") && errors.get(0).contains("IllegalStateException: no threes"),
          errors.get(0));
      assertTrue(errors.get(1).contains("element 4") && errors.get(1).contains("StackOverflowError"), errors.get(1));
    }
    // A compiled map whose body throws while tracing fails when the pipeline is built.
    try (Dataset r = Dataset.range(ctx, 0, 3)) {
      CairnException e = assertThrows(CairnException.class, () -> r.map("bad", (c, el) -> {
        throw new IllegalArgumentException("cannot trace");
      }));
      assertTrue(e.getMessage().contains("cannot trace"), e.getMessage());
    }
  }

  @Test
  void saveAndRestoreGiveTheSameRemainder() {
    try (Dataset r = Dataset.range(ctx, 0, 50);
        Dataset doubled = r.map("double", (c, e) -> {
              try (Tensor two = Tensor.scalar(c, 2L)) {
                return new Tensor[] {Ops.mul(c, e.get(0), two)};
              }
            }, Dataset.mapOptions().numParallelCalls(4));
        Dataset pipeline = doubled.shuffle(50, 9).batch(3).repeat(2).prefetch(Dataset.AUTOTUNE);
        DatasetIterator it = pipeline.iterate()) {
      for (int i = 0; i < 7; ++i) it.getNext().close();
      byte[] state = it.save();
      assertTrue(state.length > 0 && state.length < 1024, "a few integers: " + state.length);
      List<Long> rest = values(it);
      try (DatasetIterator fresh = pipeline.iterate()) {
        fresh.restore(state);
        assertEquals(7, fresh.position());
        assertEquals(rest, values(fresh));
      }
      try (Dataset other = Dataset.range(ctx, 0, 3); DatasetIterator wrong = other.iterate()) {
        CairnException e = assertThrows(CairnException.class, () -> wrong.restore(state));
        assertEquals(Code.INVALID_ARGUMENT, e.code());
      }
    }
  }

  @Test
  void iteratorInACheckpointWithAVariable() {
    try (Dataset pipeline = Dataset.range(ctx, 0, 30).shuffle(30, 5)) {
      String path;
      List<Long> rest;
      try (DatasetIterator it = pipeline.iterate();
          Tensor init = Tensor.scalar(ctx, 1.5f);
          Variable v = Variable.create(ctx, init);
          Checkpoint ckpt = Checkpoint.create(ctx, new TreeMap<>(Map.of("data", it, "v", v)))) {
        for (int i = 0; i < 11; ++i) it.getNext().close();
        path = ckpt.save(dir.resolve("ckpt").toString());
        try (Tensor two = Tensor.scalar(ctx, 2f)) {
          v.assign(two);
        }
        rest = values(it);
        try (CairnObject data = ckpt.root().get("data")) {
          assertTrue(data instanceof DatasetIterator, data.getClass().toString());
          assertEquals(ObjectKind.ITERATOR, data.kind());
        }
      }
      try (DatasetIterator it = pipeline.iterate();
          Tensor init = Tensor.scalar(ctx, 0f);
          Variable v = Variable.create(ctx, init);
          Checkpoint ckpt = Checkpoint.create(ctx, new TreeMap<>(Map.of("data", it, "v", v)));
          RestoreStatus status = ckpt.restore(path)) {
        status.assertConsumed();
        assertEquals(11, it.position());
        try (Tensor t = v.read()) {
          assertEquals(1.5f, t.toFloatArray()[0]);
        }
        assertEquals(rest, values(it));
      }
    }
  }

  @Test
  void theJvmExitsWhileWorkerThreadsAreInJavaCallbacks() throws Exception {
    // Worker threads attached to the JVM (as daemons) must not keep it alive or hang its exit.
    Path program = dir.resolve("ExitWhileMapping.java");
    Files.writeString(program, String.join("\n",
        "import dev.cairn.*;",
        "public class ExitWhileMapping {",
        "  public static void main(String[] args) throws Exception {",
        "    CairnContext ctx = new CairnContext();",
        "    Dataset ds = Dataset.range(ctx, 0, 1000000).map(\"slow\", (c, e) -> {",
        "      Thread.sleep(1);",
        "      return new Tensor[] {Tensor.scalar(c, 1L)};",
        "    }, Dataset.mapOptions().compile(false).numParallelCalls(4)",
        "        .outputSpecs(Dataset.Component.of(\"v\", DType.INT64))).prefetch(16);",
        "    DatasetIterator it = ds.iterate();",
        "    for (int i = 0; i < 20; ++i) it.getNext().close();",
        "    System.out.println(\"exiting\");",
        "    System.exit(args.length == 0 ? 0 : 4);",
        "  }",
        "}", ""));
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>(List.of(java, "-cp", new java.io.File(SourceLauncher.base(), "target/classes").getPath()));
    String lib = System.getProperty(NativeLibrary.LIBRARY_PATH_PROPERTY);
    if (lib != null) command.add("-D" + NativeLibrary.LIBRARY_PATH_PROPERTY + "=" + lib);
    command.add(program.toString());
    SourceLauncher.Result r = SourceLauncher.exec(command); // fails after 60 s
    assertEquals(0, r.exitCode(), r.output());
    assertTrue(r.output().contains("exiting"), r.output());
  }

  // A map over range(0, 3) whose eager callback holds `payload`; returns a weak reference to it.
  private java.lang.ref.WeakReference<Object> mapHolding(Object payload) {
    try (Dataset r = Dataset.range(ctx, 0, 3);
        Dataset m = r.map("holds", (c, e) -> new Tensor[] {Tensor.scalar(c, (long) payload.hashCode())},
            Dataset.mapOptions().compile(false).outputSpecs(Dataset.Component.of("v", DType.INT64)));
        DatasetIterator it = m.iterate()) {
      assertEquals(3, values(it).size());
    }
    return new java.lang.ref.WeakReference<>(payload);
  }

  @Test
  void callbacksAreReleasedWithTheirLastDataset() throws Exception {
    java.lang.ref.WeakReference<Object> held = mapHolding(new byte[1 << 20]);
    for (int i = 0; i < 100 && held.get() != null; ++i) {
      System.gc();
      Thread.sleep(10);
    }
    assertNull(held.get(), "the C release hook deleted the JNI global reference to the callback");
  }

  @Test
  void buildErrorsNameTheTransformation() {
    try (Dataset r = Dataset.range(ctx, 0, 3)) {
      assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class, () -> r.batch(0)).code());
      assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class, () -> r.shuffle(-1, 0)).code());
      assertThrows(CairnException.class, () -> r.select("nope"));
    }
    Dataset r = Dataset.range(ctx, 0, 3);
    r.close();
    CairnException e = assertThrows(CairnException.class, () -> r.batch(2));
    assertEquals("FAILED_PRECONDITION: Dataset.batch: dataset is closed", e.getMessage());
  }
}
