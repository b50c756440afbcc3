package dev.cairn;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Creating and freeing 100,000 tensors, or 100,000 object pairs (a trackable with a variable edge),
 * keeps resident memory flat, whether they are closed explicitly or left to the Cleaner. Each
 * tensor (and each variable's value) holds 1 KiB, so a leak would add 100 MB. So does a loop over
 * examples, records and profiles, and one over weights in TensorFlow and safetensors files.
 */
class LeakTest {
  private static final int COUNT = 100_000;
  private static final long SLACK = 40L << 20; // heap noise; a leak is ~100 MiB + handles
  private static final long CLEANER_SLACK = 100L << 20; // see theCleanerFreesUnclosedObjects
  private static final float[] DATA = new float[256];

  private static long residentBytes() throws IOException {
    String[] statm = new String(Files.readAllBytes(Paths.get("/proc/self/statm"))).trim().split("\\s+");
    return Long.parseLong(statm[1]) * 4096;
  }

  private static void settle() throws InterruptedException {
    for (int i = 0; i < 3; ++i) {
      System.gc();
      Thread.sleep(50);
    }
  }

  @Test
  @Timeout(20)
  void explicitCloseFreesEveryTensor() throws Exception {
    try (CairnContext ctx = new CairnContext()) {
      createAndClose(ctx, COUNT / 10); // warm up allocators and the JIT
      settle();
      long before = residentBytes();
      createAndClose(ctx, COUNT);
      settle();
      long after = residentBytes();
      assertTrue(after - before < SLACK, "resident memory grew by " + ((after - before) >> 20) + " MiB");
    }
  }

  private static void createAndClose(CairnContext ctx, int n) {
    for (int i = 0; i < n; ++i) {
      try (Tensor t = Tensor.of(ctx, DATA, 16, 16)) {
        if (t.nbytes() != 1024) throw new AssertionError();
      }
    }
  }

  @Test
  @Timeout(20)
  void theCleanerFreesUnclosedTensors() throws Exception {
    try (CairnContext ctx = new CairnContext()) {
      createAndDrop(ctx, COUNT / 10);
      settle();
      long before = residentBytes();
      createAndDrop(ctx, COUNT);
      settle();
      long after = residentBytes();
      assertTrue(after - before < SLACK, "resident memory grew by " + ((after - before) >> 20) + " MiB");
    }
  }

  private static void createAndDrop(CairnContext ctx, int n) {
    for (int i = 0; i < n; ++i) {
      Tensor t = Tensor.of(ctx, DATA, 16, 16);
      if (t.nbytes() != 1024) throw new AssertionError();
      if (i % 10_000 == 0) System.gc(); // a nudge: Java's heap alone would not trigger collection soon
    }
  }

  @Test
  @Timeout(20)
  void explicitCloseFreesEveryObject() throws Exception {
    try (CairnContext ctx = new CairnContext()) {
      objectsAndClose(ctx, COUNT / 10);
      settle();
      long before = residentBytes();
      objectsAndClose(ctx, COUNT);
      settle();
      long after = residentBytes();
      assertTrue(after - before < SLACK, "resident memory grew by " + ((after - before) >> 20) + " MiB");
    }
  }

  private static void objectsAndClose(CairnContext ctx, int n) {
    for (int i = 0; i < n; ++i) {
      try (Trackable t = Trackable.create(ctx);
          Tensor value = Tensor.of(ctx, DATA, 16, 16);
          Variable v = Variable.create(ctx, value)) {
        t.set("v", v);
      }
    }
  }

  @Test
  @Timeout(20)
  void theCleanerFreesUnclosedObjects() throws Exception {
    try (CairnContext ctx = new CairnContext()) {
      long baseline = NativeHandle.liveHandles();
      objectsAndDrop(ctx, COUNT); // warm up: reach the Cleaner's working set once
      drainCleaner(baseline);
      long before = residentBytes();
      objectsAndDrop(ctx, COUNT);
      objectsAndDrop(ctx, COUNT);
      // Every handle the loop dropped is freed by the Cleaner: the count returns to the baseline.
      assertTrue(drainCleaner(baseline), "handles still live: " + (NativeHandle.liveHandles() - baseline));
      long after = residentBytes();
      // Leaking this loop would cost ~1.5 KiB per iteration (1 KiB of values plus three objects),
      // about 300 MiB over the two measured rounds.
      assertTrue(after - before < CLEANER_SLACK, "resident memory grew by " + ((after - before) >> 20) + " MiB");
    }
  }

  // Collects until the Cleaner has freed everything above `baseline` (true), or 10 s pass.
  static boolean drainCleaner(long baseline) throws InterruptedException {
    for (int i = 0; i < 500; ++i) {
      if (NativeHandle.liveHandles() <= baseline) return true;
      System.gc();
      Thread.sleep(20);
    }
    return NativeHandle.liveHandles() <= baseline;
  }

  // Drops every object to the Cleaner. Every 10,000 iterations it waits until the Cleaner has
  // caught up, so its backlog (and the native memory it holds) is bounded the same way in every
  // round, and resident memory measures leaks rather than how far a busy Cleaner thread lagged.
  private static void objectsAndDrop(CairnContext ctx, int n) throws InterruptedException {
    long baseline = NativeHandle.liveHandles();
    for (int i = 0; i < n; ++i) {
      Trackable t = Trackable.create(ctx);
      t.set("v", Variable.create(ctx, Tensor.of(ctx, DATA, 16, 16)));
      // The frame may still hold this iteration's objects (3 handles): allow for them here; the
      // exact check runs after the loop returns.
      if (i % 10_000 == 9_999) drainCleaner(baseline + 3);
    }
  }

  // The hand-written glue of records, examples and profiles (cairn_jni_io.c) frees what it
  // marshals: 1 KiB of floats and a 1 KiB byte string per example go through the per-call arena's
  // heap blocks, and each parsed batch returns two tensors; a leak would cost > 4 KiB an iteration.
  @Test
  @Timeout(60)
  void examplesRecordsAndProfilesKeepMemoryFlat(@TempDir Path dir)
      throws Exception {
    String path = dir.resolve("leak.tfrecord").toString();
    try (CairnContext ctx = new CairnContext();
        RecordWriter w = RecordWriter.open(path)) {
      examplesRoundTrip(ctx, w, path, 5_000);
      settle();
      long baseline = NativeHandle.liveHandles();
      long before = residentBytes();
      examplesRoundTrip(ctx, w, path, 20_000);
      settle();
      long after = residentBytes();
      assertEquals(baseline, NativeHandle.liveHandles());
      assertTrue(after - before < SLACK, "resident memory grew by " + ((after - before) >> 20) + " MiB");
    }
  }

  private static void examplesRoundTrip(CairnContext ctx, RecordWriter w, String path, int n) {
    byte[] raw = new byte[1024];
    FeatureSpec[] specs = {FeatureSpec.fixedLen("x", DType.FLOAT32, 256), FeatureSpec.varLen("raw", DType.UINT8)};
    for (int i = 0; i < n; ++i) {
      byte[] record;
      try (Example ex = Example.create()) {
        record = ex.set("x", DATA).set("raw", raw, raw).serialize();
      }
      try (Example back = Example.parse(ExampleKind.EXAMPLE, record)) {
        assertEquals(2, back.bytes("raw").length);
      }
      Tensor[][] out = Example.parseExamples(ctx, List.of(record), specs);
      for (Tensor[] ts : out) for (Tensor t : ts) t.close();
      if (i % 100 == 0) {
        w.write(record);
        w.flush();
        try (RecordReader r = RecordReader.open(path)) {
          assertNotNull(r.next());
        }
        Profiler.start();
        try (Tensor t = Tensor.of(ctx, DATA, 256)) {
          Ops.add(ctx, t, t).close();
        }
        try (Profile p = Profiler.stop()) {
          assertFalse(p.events().isEmpty());
          assertFalse(p.chromeTrace().isEmpty());
        }
      }
    }
  }

  // Weights in other formats: save and load by name, export, restore and read TensorFlow and
  // safetensors files, and a failed load. The variable holds 128 KiB, so a value copy leaked per
  // iteration would cost 62 MiB over the measured round; the handle count must come back exactly.
  @Test
  @Timeout(120)
  void weightsInOtherFormatsKeepMemoryFlat(@TempDir Path dir) throws Exception {
    try (CairnContext ctx = new CairnContext();
        Module m = Module.create(ctx, "m");
        Tensor init = Tensor.of(ctx, new float[32 * 1024], 32 * 1024);
        Variable v = Variable.create(ctx, init);
        Checkpoint ckpt = Checkpoint.create(ctx, "m", m)) {
      m.set("w", v);
      weightsRoundTrip(ctx, m, ckpt, dir, 40);
      settle();
      long baseline = NativeHandle.liveHandles();
      long before = residentBytes();
      weightsRoundTrip(ctx, m, ckpt, dir, 500);
      settle();
      long after = residentBytes();
      assertEquals(baseline, NativeHandle.liveHandles());
      assertTrue(after - before < SLACK, "resident memory grew by " + ((after - before) >> 20) + " MiB");
    }
  }

  private static void weightsRoundTrip(CairnContext ctx, Module m, Checkpoint ckpt, Path dir, int n) {
    String st = dir.resolve("w.safetensors").toString();
    String tf = dir.resolve("w").toString();
    String exported = dir.resolve("ckpt").toString();
    String missing = dir.resolve("missing").toString();
    WeightsOptions opts = new WeightsOptions().prefix("m.").separator(".").metadata(java.util.Map.of("format", "pt"));
    for (int i = 0; i < n; ++i) {
      m.saveWeights(st, WeightsFormat.SAFETENSORS, opts);
      assertEquals(1, m.loadWeights(st, opts));
      m.saveWeights(tf, WeightsFormat.TF);
      assertEquals(1, m.loadWeights(tf));
      ckpt.export(exported, WeightsFormat.TF, Checkpoint.exportOptions().kerasNames(false));
      try (RestoreStatus status = ckpt.restore(exported)) {
        status.assertConsumed();
      }
      try (CheckpointReader r = CheckpointReader.open(exported)) {
        assertEquals(WeightsFormat.TF, r.format());
        for (CheckpointReader.Entry e : r.entries()) assertNotNull(e.typeName());
        assertTrue(r.loadStringElement("_CHECKPOINTABLE_OBJECT_GRAPH", 0).length > 0);
        assertTrue(r.verify("m/w/.ATTRIBUTES/VARIABLE_VALUE"));
      }
      try (CheckpointReader r = CheckpointReader.open(st)) {
        assertEquals("pt", r.metadata().get("format"));
        assertTrue(r.verify("m.w"));
        try (Tensor t = r.load(ctx, "m.w")) {
          assertEquals(32 * 1024, t.numElements());
        }
      }
      CairnException e = assertThrows(CairnException.class, () -> m.loadWeights(missing, opts));
      assertEquals(Code.NOT_FOUND, e.code());
    }
  }

  @Test
  @Timeout(20)
  void theCleanerFreesUnclosedContexts() throws Exception {
    for (int i = 0; i < 200; ++i) new CairnContext(CairnContext.options().numThreads(1)).device();
    settle();
    long before = residentBytes();
    for (int i = 0; i < 2000; ++i) {
      new CairnContext(CairnContext.options().numThreads(1)).device();
      if (i % 200 == 0) System.gc();
    }
    settle();
    long after = residentBytes();
    assertTrue(after - before < SLACK, "resident memory grew by " + ((after - before) >> 20) + " MiB");
  }
}
