package dev.cairn;

import static dev.cairn.ClosedAssert.assertClosed;
import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Conformance scenarios S1-S8 (../shared/design/SCENARIOS.md) through the Java binding, ported
 * from tests/capi/scenarios_test.c with the exact listings. Each "round" builds fresh objects,
 * as a new run of a program would.
 */
class ScenariosTest {
  private static CairnContext ctx;

  @TempDir Path tmp;

  @BeforeAll
  static void open() {
    ctx = new CairnContext();
  }

  @AfterAll
  static void close() {
    ctx.close();
  }

  // ---- helpers ----

  static Variable intVar(int value, String name, Module scope) {
    try (Tensor t = Tensor.scalar(ctx, value)) {
      return Variable.create(ctx, t, Variable.options().name(name).scope(scope));
    }
  }

  static Variable floatVar(float value, String name) {
    try (Tensor t = Tensor.scalar(ctx, value)) {
      return Variable.create(ctx, t, Variable.options().name(name));
    }
  }

  /** parent.name = child (tracked), closing the caller's handle to child. */
  static void setChild(CairnObject parent, String name, CairnObject child) {
    try (child) {
      parent.set(name, child);
    }
  }

  static Trackable trackable() {
    return Trackable.create(ctx);
  }

  /** Follows "a/b/c" one edge at a time; the caller closes the result. */
  static CairnObject get(CairnObject root, String path) {
    CairnObject cur = null;
    for (String part : path.split("/")) {
      CairnObject next = (cur == null ? root : cur).get(part);
      if (cur != null) cur.close();
      cur = next;
    }
    return cur;
  }

  static double readScalar(Variable v) {
    try (Tensor t = v.read()) {
      assertEquals(0, t.rank());
      switch (t.dtype()) {
        case INT32: return t.toIntArray()[0];
        case FLOAT32: return t.toFloatArray()[0];
        default: throw new AssertionError(t.toString());
      }
    }
  }

  static double readPath(CairnObject root, String path) {
    try (CairnObject v = get(root, path)) {
      return readScalar((Variable) v);
    }
  }

  static void addPath(CairnObject root, String path, int delta) {
    try (CairnObject v = get(root, path);
        Tensor d = Tensor.scalar(ctx, delta)) {
      ((Variable) v).assignAdd(d);
    }
  }

  /** Restores the manager's latest checkpoint (none: nothing) and closes the status. */
  static void restoreLatest(Checkpoint c, CheckpointManager m) {
    try (RestoreStatus rs = c.restore(m.latest())) {
      assertFalse(rs.isClosed());
    }
  }

  static List<String> basenames(List<String> paths) {
    List<String> out = new ArrayList<>();
    for (String p : paths) out.add(Path.of(p).getFileName().toString());
    return out;
  }

  /** The listing of the checkpoint at `path`: "key dtype [shape]" per key, sorted. */
  static List<String> listing(String path) {
    try (CheckpointReader r = CheckpointReader.open(path)) {
      List<String> out = new ArrayList<>();
      for (CheckpointReader.Entry e : r.entries()) out.add(e.toString());
      assertEquals(r.size(), out.size());
      assertEquals(r.keys().size(), out.size());
      return out;
    }
  }

  static Checkpoint checkpoint(String name, CairnObject obj) {
    return Checkpoint.create(ctx, name, obj);
  }

  static CheckpointManager manager(Checkpoint c, Path dir, long maxToKeep) {
    return CheckpointManager.create(c, dir.toString(), CheckpointManager.options().maxToKeep(maxToKeep));
  }

  static final String GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH string []";
  static final String COUNTER = "save_counter/.ATTRIBUTES/VARIABLE_VALUE int64 []";

  static final List<String> S2_LISTING = List.of(GRAPH, COUNTER, "tr2/v/.ATTRIBUTES/VARIABLE_VALUE int32 []");

  static final List<String> S4_LISTING =
      List.of(
          GRAPH,
          COUNTER,
          "tr3/br_dict/br3/v/.ATTRIBUTES/VARIABLE_VALUE int32 []",
          "tr3/br_list/0/v/.ATTRIBUTES/VARIABLE_VALUE int32 []",
          "tr3/br_list/1/v/.ATTRIBUTES/VARIABLE_VALUE int32 []");

  // ---- S1 ----

  @Test
  void s1ManagerWithMaxToKeep2() {
    Path dir = tmp.resolve("s1");
    List<Double> printed = new ArrayList<>();
    for (int round = 1; round <= 3; ++round) {
      try (Trackable tr1 = trackable()) {
        setChild(tr1, "tr1_v", intVar(1, "tr1_v", null));
        try (Checkpoint c = checkpoint("tr1", tr1);
            CheckpointManager m = manager(c, dir, 2)) {
          if (round == 1) assertNull(m.latest());
          if (round == 2) assertEquals(List.of("ckpt-1"), basenames(m.checkpoints()));
          if (round == 3) assertEquals(List.of("ckpt-1", "ckpt-2"), basenames(m.checkpoints()));
          restoreLatest(c, m);
          printed.add(readPath(tr1, "tr1_v"));
          addPath(tr1, "tr1_v", 1);
          String path = m.save();
          assertEquals("ckpt-" + round, Path.of(path).getFileName().toString());
          assertEquals(path, m.latest());
          if (round == 3) {
            assertEquals(List.of("ckpt-2", "ckpt-3"), basenames(m.checkpoints()));
            assertFalse(Files.exists(dir.resolve("ckpt-1")), "ckpt-1 is gone from disk");
          }
        }
      }
    }
    assertEquals(List.of(1.0, 2.0, 3.0), printed);
  }

  // ---- S2 and S3 ----

  static Trackable makeTr2() {
    Trackable tr2 = trackable();
    setChild(tr2, "v", intVar(1000, "v", null));
    try (Variable untracked = intVar(0, "untracked", null)) {
      tr2.setUntracked("untracked", untracked);
    }
    return tr2;
  }

  @Test
  void s2UntrackedAttributesAndS3DeletingAnEdge() {
    Path dir = tmp.resolve("s2");
    for (int round = 1; round <= 2; ++round) {
      try (Trackable tr2 = makeTr2();
          Checkpoint c = checkpoint("tr2", tr2);
          CheckpointManager m = manager(c, dir, 5)) {
        restoreLatest(c, m);
        assertEquals(1000 * round, readPath(tr2, "v"));
        assertEquals(0, readPath(tr2, "untracked"));
        addPath(tr2, "v", 1000);
        m.save();
        assertEquals(S2_LISTING, listing(m.latest()));
        if (round == 2) {
          try (CheckpointReader r = CheckpointReader.open(m.latest());
              Tensor t = r.load(ctx, "tr2/v/.ATTRIBUTES/VARIABLE_VALUE")) {
            assertArrayEquals(new int[] {3000}, t.toIntArray());
            CairnException e =
                assertThrows(CairnException.class, () -> r.load(ctx, "tr2/untracked/.ATTRIBUTES/VARIABLE_VALUE"));
            assertEquals(Code.NOT_FOUND, e.code());
            assertTrue(
                e.getMessage().contains("no key named 'tr2/untracked/.ATTRIBUTES/VARIABLE_VALUE'"), e.getMessage());
          }
          // S3: an edge added, saved, deleted, saved again.
          setChild(tr2, "deleted", intVar(-1, "deleted", null));
          m.save();
          assertEquals(
              List.of(
                  GRAPH,
                  COUNTER,
                  "tr2/deleted/.ATTRIBUTES/VARIABLE_VALUE int32 []",
                  "tr2/v/.ATTRIBUTES/VARIABLE_VALUE int32 []"),
              listing(m.latest()));
          tr2.delete("deleted");
          CairnException e = assertThrows(CairnException.class, () -> tr2.delete("deleted"));
          assertEquals(Code.NOT_FOUND, e.code());
          assertTrue(e.getMessage().contains("deleted"), e.getMessage());
          m.save();
          assertEquals(S2_LISTING, listing(m.latest()));
        }
      }
    }
  }

  // ---- S4 and S5 ----

  static Trackable branch() {
    Trackable br = trackable();
    setChild(br, "v", intVar(5, "v", null));
    return br;
  }

  @Test
  void s4ContainersAndS5Sharing() {
    Path dir = tmp.resolve("s4");
    String[] paths = {"br_list/0/v", "br_list/1/v", "br_dict/br3/v", "br_dict/br1/v", "br_dict/br2/v"};
    try (Trackable tr3 = trackable();
        Trackable br1 = branch();
        Trackable br2 = branch();
        Trackable br3 = branch()) {
      ListObject list = ListObject.create(ctx);
      list.append(br1);
      list.append(br2);
      assertEquals(2, list.size());
      setChild(tr3, "br_list", list);
      DictObject dict = DictObject.create(ctx);
      dict.set("br3", br3);
      setChild(tr3, "br_dict", dict);
      try (Checkpoint c = checkpoint("tr3", tr3);
          CheckpointManager m = manager(c, dir, 5)) {
        m.save();
        assertEquals(S4_LISTING, listing(m.latest()));

        // S5: a dict that shares br1 and br2 with the list.
        try (DictObject shared = DictObject.create(ctx)) {
          shared.set("br1", br1);
          shared.set("br2", br2);
          shared.set("br3", br3);
          assertEquals(List.of("br1", "br2", "br3"), shared.keys());
          tr3.set("br_dict", shared);
        }
        try (RestoreStatus rs = c.restore(m.latest())) {
          rs.assertConsumed();
        }
        addPath(br1, "v", 5);
        addPath(br2, "v", 5);
        addPath(br3, "v", 5);
        m.save();
        assertEquals(S4_LISTING, listing(m.latest()));
        addPath(br1, "v", -10);
        addPath(br2, "v", -10);
        addPath(br3, "v", -10);
        for (String p : paths) assertEquals(0, readPath(tr3, p), p);
        try (Checkpoint c2 = checkpoint("tr3", tr3);
            RestoreStatus rs = c2.restore(m.latest())) {
          for (String p : paths) assertEquals(10, readPath(tr3, p), p);
          rs.assertExistingObjectsMatched();
        }
        try (CairnObject viaList = get(tr3, "br_list/0");
            CairnObject viaDict = get(tr3, "br_dict/br1")) {
          assertTrue(viaList.sameObject(viaDict));
          assertTrue(viaList.sameObject(br1));
        }
      }
    }
  }

  // ---- S6 ----

  static Module moduleWithVar(String name) {
    Module mod = Module.create(ctx, name);
    setChild(mod, "v", intVar(7, "m_v", mod));
    return mod;
  }

  @Test
  void s6ModulesAndNameScopes() {
    Path path = tmp.resolve("modules");
    try (Module m1 = moduleWithVar("m1");
        Module m2 = moduleWithVar("m2");
        Module m3 = moduleWithVar("m3")) {
      m1.set("sub", m2);
      m2.set("sub", m3);
      List<Variable> vars = m1.variables();
      List<String> names = new ArrayList<>();
      for (Variable v : vars) {
        names.add(v.name());
        v.close();
      }
      assertEquals(List.of("m1/m_v:0", "m2/m_v:0", "m3/m_v:0"), names);
      List<Module> subs = m1.submodules();
      assertEquals(2, subs.size());
      assertEquals("m2", subs.get(0).name());
      assertEquals("m3", subs.get(1).name());
      assertTrue(subs.get(0).sameObject(m2));
      subs.forEach(Module::close);

      try (Checkpoint c = checkpoint("module", m1)) {
        c.write(path.toString());
        assertEquals(
            List.of(
                "_CHECKPOINTABLE_OBJECT_GRAPH string []",
                "module/sub/sub/v/.ATTRIBUTES/VARIABLE_VALUE int32 []",
                "module/sub/v/.ATTRIBUTES/VARIABLE_VALUE int32 []",
                "module/v/.ATTRIBUTES/VARIABLE_VALUE int32 []",
                "save_counter/.ATTRIBUTES/VARIABLE_VALUE int64 []"),
            listing(path.toString()));
        addPath(m1, "v", 1);
        addPath(m1, "sub/v", 2);
        addPath(m1, "sub/sub/v", 3);
        try (RestoreStatus rs = c.restore(path.toString())) {
          rs.assertConsumed();
        }
        assertEquals(7, readPath(m1, "v"));
        assertEquals(7, readPath(m1, "sub/v"));
        assertEquals(7, readPath(m1, "sub/sub/v"));
      }
    }
  }

  // ---- S7 ----

  @Test
  void s7DeferredRestore() {
    String path = tmp.resolve("deferred").toString();
    try (Checkpoint c = Checkpoint.create(ctx);
        Variable l0 = floatVar(1.0f, "l0");
        Variable l1 = floatVar(2.0f, "l1")) {
      Trackable root = c.root();
      ListObject listed = ListObject.create(ctx);
      listed.append(l0);
      listed.append(l1);
      DictObject mapped = DictObject.create(ctx);
      mapped.set("one", l0);
      mapped.set("two", l1);
      setChild(root, "listed", listed);
      setChild(root, "mapped", mapped);
      Trackable layer = trackable();
      setChild(layer, "kernel", floatVar(3.0f, "kernel"));
      setChild(root, "layer", layer);
      c.write(path);
    }

    // A new program state with only mapped = {"two": v2} and an empty layer.
    Trackable root;
    try (Checkpoint c2 = Checkpoint.create(ctx);
        Variable v2 = floatVar(0.0f, "v2");
        Trackable fakeLayer = trackable()) {
      root = c2.root();
      assertTrue(root.isBorrowed());
      DictObject newMapped = DictObject.create(ctx);
      newMapped.set("two", v2);
      setChild(root, "mapped", newMapped);
      root.set("layer", fakeLayer);
      try (RestoreStatus rs = c2.restore(path)) {
        assertEquals(2.0, readScalar(v2));
        // assert_consumed fails while values are still waiting for their objects.
        CairnException e = assertThrows(CairnException.class, rs::assertConsumed);
        assertEquals(Code.FAILED_PRECONDITION, e.code());
        assertTrue(e.getMessage().contains("listed/0/.ATTRIBUTES/VARIABLE_VALUE"), e.getMessage());
        rs.assertExistingObjectsMatched();
      } // deferred restores live on with the checkpoint

      setChild(root, "listed", ListObject.create(ctx));
      try (ListObject newList = root.get("listed", ListObject.class);
          Variable v1 = floatVar(0.0f, "v1");
          Variable kernel = floatVar(0.0f, "kernel")) {
        newList.append(v1);
        assertEquals(1.0, readScalar(v1)); // restored the moment it was appended
        try (Variable same = newList.get(0, Variable.class)) {
          assertTrue(same.sameObject(v1));
        }
        fakeLayer.set("kernel", kernel);
        assertEquals(3.0, readScalar(kernel));
      }
      root.close(); // a borrowed view: closing it does nothing
      assertFalse(root.isClosed());
      assertEquals(4, root.childCount()); // mapped, layer, listed and the restored save_counter
    }
    // The checkpoint is closed: its borrowed root is unusable.
    assertTrue(root.isClosed());
    assertClosed("FAILED_PRECONDITION: CairnObject.childCount: checkpoint is closed (this object is its root)", root::childCount);
  }

  // ---- S8 ----

  static Variable matrixVar(String name, long rows, long cols, float fill) {
    float[] v = new float[5];
    for (int i = 0; i < 5; ++i) v[i] = fill + i;
    try (Tensor t = rows > 0 ? Tensor.of(ctx, v, rows, cols) : Tensor.of(ctx, v, cols)) {
      return Variable.create(ctx, t, Variable.options().name(name));
    }
  }

  @Test
  void s8PartialRestoreThroughASubgraph() {
    String path = tmp.resolve("net").toString();
    try (Trackable net = trackable();
        Trackable l1 = trackable();
        Trackable fakeNet = trackable();
        Trackable fakeLayer = trackable();
        Variable toRestore = matrixVar("bias", 0, 5, 0.0f)) {
      setChild(l1, "kernel", matrixVar("kernel", 1, 5, 10.0f));
      setChild(l1, "bias", matrixVar("bias", 0, 5, 20.0f));
      net.set("l1", l1);
      try (Checkpoint c = checkpoint("net", net)) {
        c.write(path);
      }
      fakeLayer.set("bias", toRestore);
      fakeNet.set("l1", fakeLayer);
      try (Checkpoint c2 = checkpoint("net", fakeNet);
          RestoreStatus rs = c2.restore(path);
          Tensor bias = toRestore.read()) {
        assertArrayEquals(new float[] {20, 21, 22, 23, 24}, bias.toFloatArray());
        rs.assertExistingObjectsMatched();
        CairnException e = assertThrows(CairnException.class, rs::assertConsumed);
        assertEquals(Code.FAILED_PRECONDITION, e.code());
        assertTrue(e.getMessage().contains("net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE"), e.getMessage());
        assertSame(rs, rs.expectPartial());
      }
    }
  }

  // ---- errors ----

  @Test
  void badInputsMapToCairnExceptions() throws IOException {
    Path dir = tmp.resolve("errors");
    String path = dir.resolve("int").toString();
    Files.createDirectories(dir);
    try (Trackable tr = trackable();
        Trackable other = trackable()) {
      CairnException reserved =
          assertThrows(CairnException.class, () -> Checkpoint.create(ctx, Map.of("a", tr, "save_counter", other)));
      assertEquals(Code.INVALID_ARGUMENT, reserved.code());
      assertTrue(reserved.getMessage().contains("reserved"), reserved.getMessage());
      CairnException slash = assertThrows(CairnException.class, () -> Checkpoint.create(ctx, "a/b", tr));
      assertEquals(Code.INVALID_ARGUMENT, slash.code());

      setChild(tr, "v", intVar(1, "v", null));
      setChild(other, "v", floatVar(1.0f, "v"));
      try (Checkpoint c = checkpoint("tr", tr);
          Checkpoint c2 = checkpoint("tr", other)) {
        c.write(path);
        // A dtype mismatch names the key.
        CairnException dtype = assertThrows(CairnException.class, () -> c2.restore(path));
        assertEquals(Code.INVALID_ARGUMENT, dtype.code());
        assertTrue(
            dtype.getMessage().contains("'tr/v/.ATTRIBUTES/VARIABLE_VALUE' is int32[] in the checkpoint"),
            dtype.getMessage());
        // restore(null) gives an empty status whose asserts fail.
        try (RestoreStatus rs = c2.restore(null)) {
          CairnException none = assertThrows(CairnException.class, rs::assertConsumed);
          assertEquals(Code.FAILED_PRECONDITION, none.code());
          assertTrue(none.getMessage().contains("no checkpoint was restored"), none.getMessage());
        }
        String missing = dir.resolve("missing").toString();
        CairnException nf = assertThrows(CairnException.class, () -> c2.restore(missing));
        assertEquals(Code.NOT_FOUND, nf.code());
        assertTrue(nf.getMessage().contains("missing"), nf.getMessage());
        assertEquals(Code.NOT_FOUND, assertThrows(CairnException.class, () -> CheckpointReader.open(missing)).code());

        Path garbage = dir.resolve("garbage");
        Files.write(
            garbage,
            "this is not a checkpoint, but it is long enough to have a header and a footer......"
                .getBytes(StandardCharsets.US_ASCII));
        CairnException dl = assertThrows(CairnException.class, () -> c2.restore(garbage.toString()));
        assertEquals(Code.DATA_LOSS, dl.code());
        assertTrue(dl.getMessage().contains("garbage"), dl.getMessage());
        assertEquals(
            Code.DATA_LOSS, assertThrows(CairnException.class, () -> CheckpointReader.open(garbage.toString())).code());

        CairnException keep =
            assertThrows(
                CairnException.class,
                () -> CheckpointManager.create(c, dir.toString(), CheckpointManager.options().maxToKeep(0)));
        assertEquals(Code.INVALID_ARGUMENT, keep.code());
        assertTrue(keep.getMessage().contains("max_to_keep"), keep.getMessage());
        assertEquals("prefix", assertThrows(NullPointerException.class, () -> c.save(null)).getMessage());

        // The reader: the object graph is a string entry.
        try (CheckpointReader r = CheckpointReader.open(path)) {
          byte[] graph = r.loadString("_CHECKPOINTABLE_OBJECT_GRAPH");
          assertTrue(graph.length > 0);
          CairnException str = assertThrows(CairnException.class, () -> r.load(ctx, "_CHECKPOINTABLE_OBJECT_GRAPH"));
          assertEquals(Code.INVALID_ARGUMENT, str.code());
          assertEquals(Code.NOT_FOUND, assertThrows(CairnException.class, () -> r.loadString("nope")).code());
        }
      }
    }
  }

  @Test
  void closedHandlesThrowAndCloseIsIdempotent() {
    Checkpoint c;
    RestoreStatus rs;
    CheckpointManager m;
    CheckpointReader r;
    String path = tmp.resolve("closed").toString();
    try (Trackable tr = trackable()) {
      c = checkpoint("tr", tr);
      c.write(path);
      rs = c.restore(path);
      m = CheckpointManager.create(c, tmp.resolve("closed-dir").toString());
      r = CheckpointReader.open(path);
    }
    for (AutoCloseable h : List.of(rs, m, r, c)) {
      assertDoesNotThrow(h::close);
      assertDoesNotThrow(h::close);
    }
    assertClosed("FAILED_PRECONDITION: Checkpoint.saveCounter: checkpoint is closed", c::saveCounter);
    assertClosed("FAILED_PRECONDITION: Checkpoint.root: checkpoint is closed", c::root);
    assertClosed("FAILED_PRECONDITION: RestoreStatus.assertConsumed: restore status is closed", rs::assertConsumed);
    assertClosed("FAILED_PRECONDITION: CheckpointManager.latest: checkpoint manager is closed", m::latest);
    assertClosed("FAILED_PRECONDITION: CheckpointReader.keys: checkpoint reader is closed", r::keys);
    assertEquals("Checkpoint(closed)", c.toString());
  }

  // ---- save / save_counter / async / compression ----

  @Test
  void saveCounterAsyncAndCompression() throws IOException {
    Path dir = Files.createDirectories(tmp.resolve("async"));
    String prefix = dir.resolve("model").toString();
    try (Trackable tr = trackable()) {
      setChild(tr, "v", intVar(41, "v", null));
      try (Checkpoint c = checkpoint("tr", tr)) {
        assertEquals(0, c.saveCounter());
        assertEquals("model-1", Path.of(c.save(prefix)).getFileName().toString());
        assertEquals(1, c.saveCounter());
        c.setOptions(Checkpoint.options().async(true).compress(true));
        addPath(tr, "v", 1);
        String path = c.save(prefix); // model-2, written in the background
        addPath(tr, "v", 100); // does not leak into the snapshot
        c.sync();
        try (RestoreStatus rs = c.restore(path)) {
          rs.assertConsumed();
          assertEquals(42, readPath(tr, "v"));
        }
        assertEquals(2, c.saveCounter());
        // A background failure shows up on the next call, once.
        c.write(dir.resolve("no/such/dir/x").toString());
        CairnException e = assertThrows(CairnException.class, c::sync);
        assertEquals(Code.NOT_FOUND, e.code());
        assertTrue(e.getMessage().contains("no/such/dir"), e.getMessage());
        c.sync();
        c.setOptions(null);
      }
    }
  }

  @Test
  void managerSavesNumberedCheckpointsWithOptions() {
    Path dir = tmp.resolve("numbered");
    try (Trackable tr = trackable()) {
      setChild(tr, "v", intVar(1, "v", null));
      try (Checkpoint c = checkpoint("tr", tr);
          CheckpointManager m =
              CheckpointManager.create(
                  c, dir.toString(), CheckpointManager.options().checkpointName("model").maxToKeep(-1))) {
        assertEquals(List.of(), m.checkpoints());
        assertEquals("model-10", Path.of(m.save(10)).getFileName().toString());
        // Every save increments save_counter (as in TensorFlow), numbered or not.
        assertEquals(1, c.saveCounter());
        assertEquals("model-2", Path.of(m.save()).getFileName().toString());
        assertEquals(List.of("model-10", "model-2"), basenames(m.checkpoints()));
        assertThrows(IllegalArgumentException.class, () -> m.save(-2));
      }
      // A new manager over the same directory finds them.
      try (Checkpoint c = checkpoint("tr", tr);
          CheckpointManager m =
              CheckpointManager.create(c, dir.toString(), CheckpointManager.options().checkpointName("model"))) {
        assertEquals("model-2", Path.of(m.latest()).getFileName().toString());
        assertEquals(2, m.checkpoints().size());
      }
    }
  }
}
