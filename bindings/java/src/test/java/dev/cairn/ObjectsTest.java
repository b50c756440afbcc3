package dev.cairn;

import static dev.cairn.ClosedAssert.assertClosed;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The object graph: kinds, edges, variables, containers, module queries, lifetimes. */
class ObjectsTest {
  private CairnContext ctx;

  @BeforeEach
  void open() {
    ctx = new CairnContext();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  private Variable var(float[] values, String name, long... shape) {
    try (Tensor t = Tensor.of(ctx, values, shape)) {
      return Variable.create(ctx, t, Variable.options().name(name));
    }
  }

  private static List<String> paths(List<ObjectPath> entries) {
    List<String> out = new ArrayList<>();
    for (ObjectPath e : entries) {
      out.add(e.path());
      e.close();
    }
    return out;
  }

  @Test
  void trackableEdges() {
    try (Trackable t = Trackable.create(ctx);
        Variable v = var(new float[] {1, 2}, "v", 2);
        Trackable child = Trackable.create(ctx)) {
      assertEquals(ObjectKind.TRACKABLE, t.kind());
      assertEquals(ObjectKind.VARIABLE, v.kind());
      t.set("v", v);
      t.set("child", child);
      assertEquals(2, t.childCount());
      try (CairnObject got = t.get("v")) {
        assertTrue(got instanceof Variable);
        assertTrue(got.sameObject(v));
        assertFalse(got.sameObject(child));
        assertFalse(got.sameObject(null));
      }
      try (Trackable got = t.get("child", Trackable.class)) {
        assertTrue(got.sameObject(child));
      }
      assertThrows(ClassCastException.class, () -> t.get("v", Module.class));
      assertEquals(List.of("v", "child"), paths(t.children()));
      t.set("v", child); // a replaced edge keeps its position
      assertEquals(List.of("v", "child"), paths(t.children()));
      t.delete("v");
      assertEquals(List.of("child"), paths(t.children()));
      CairnException e = assertThrows(CairnException.class, () -> t.get("w"));
      assertEquals(Code.NOT_FOUND, e.code());
      assertTrue(e.getMessage().contains("no child named \"w\""), e.getMessage());
      CairnException bad = assertThrows(CairnException.class, () -> t.set("a/b", v));
      assertEquals(Code.INVALID_ARGUMENT, bad.code());
      CairnException varParent = assertThrows(CairnException.class, () -> v.set("x", child));
      assertEquals(Code.INVALID_ARGUMENT, varParent.code());
      // Untracked references are reachable by name but never listed.
      t.setUntracked("cache/x", v);
      try (CairnObject got = t.get("cache/x")) {
        assertTrue(got.sameObject(v));
      }
      assertEquals(List.of("child"), paths(t.children()));
      assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class, () -> v.setUntracked("x", t)).code());
    }
  }

  @Test
  void variablesReadAssignAndName() {
    try (Variable v = var(new float[] {1, 2, 3}, "w", 3);
        Tensor d = Tensor.of(ctx, new float[] {10, 20, 30}, 3);
        Tensor wrong = Tensor.of(ctx, new float[] {1, 2}, 2);
        Tensor wrongType = Tensor.of(ctx, new int[] {1, 2, 3}, 3)) {
      assertEquals("w:0", v.name());
      assertTrue(v.trainable());
      assertEquals(DType.FLOAT32, v.dtype());
      assertArrayEquals(new long[] {3}, v.shape());
      try (Tensor snapshot = v.read()) {
        v.assignAdd(d);
        assertArrayEquals(new float[] {1, 2, 3}, snapshot.toFloatArray()); // snapshots do not change
      }
      try (Tensor t = v.read()) {
        assertArrayEquals(new float[] {11, 22, 33}, t.toFloatArray());
      }
      v.assignSub(d);
      v.assignSub(d);
      try (Tensor t = v.read()) {
        assertArrayEquals(new float[] {-9, -18, -27}, t.toFloatArray());
      }
      v.assign(d);
      try (Tensor t = v.read()) {
        assertArrayEquals(new float[] {10, 20, 30}, t.toFloatArray());
      }
      CairnException shape = assertThrows(CairnException.class, () -> v.assign(wrong));
      assertEquals(Code.INVALID_ARGUMENT, shape.code());
      assertEquals(
          "INVALID_ARGUMENT: Variable.assign: a float32[2] tensor for variable 'w:0' of float32[3]", shape.getMessage());
      CairnException type = assertThrows(CairnException.class, () -> v.assignAdd(wrongType));
      assertEquals(Code.INVALID_ARGUMENT, type.code());
      assertTrue(type.getMessage().startsWith("INVALID_ARGUMENT: Variable.assignAdd: a int"), type.getMessage());
      assertEquals("Variable(w:0, float32)", v.toString());
    }
    try (Tensor t = Tensor.scalar(ctx, true);
        Variable plain = Variable.create(ctx, t);
        Variable frozen = Variable.create(ctx, t, Variable.options().trainable(false))) {
      assertEquals("Variable:0", plain.name());
      assertFalse(frozen.trainable());
      assertEquals(0, plain.shape().length);
      CairnException add = assertThrows(CairnException.class, () -> plain.assignAdd(t));
      assertTrue(add.getMessage().startsWith("INVALID_ARGUMENT: cairn_variable_assign_add: "), add.getMessage());
    }
    try (Tensor bad = Tensor.scalar(ctx, 1f)) {
      CairnException e =
          assertThrows(CairnException.class, () -> Variable.create(ctx, bad, Variable.options().name("a:b")));
      assertEquals(Code.INVALID_ARGUMENT, e.code());
    }
  }

  @Test
  void modulesNameTheirVariables() {
    try (Module m1 = Module.create(ctx, "m1");
        Module m2 = Module.create(ctx, "m2", m1);
        Module anonymous = Module.create(ctx, null);
        Tensor t = Tensor.scalar(ctx, 1f);
        Variable v = Variable.create(ctx, t, Variable.options().name("x").scope(m2))) {
      assertEquals(ObjectKind.MODULE, m1.kind());
      assertEquals("m1", m1.name());
      assertEquals("m1", m1.scope());
      assertEquals("m2", m2.name());
      assertEquals("m1/m2", m2.scope());
      assertEquals("module", anonymous.name());
      assertEquals("m1/m2/x:0", v.name());
      assertEquals("Module(m1/m2)", m2.toString());
      assertEquals(0, m1.childCount()); // a scope is not an edge
      assertEquals(Code.INVALID_ARGUMENT, assertThrows(CairnException.class, () -> Module.create(ctx, "a/b")).code());
    }
  }

  @Test
  void moduleQueries() {
    try (Module root = Module.create(ctx, "root");
        Module sub = Module.create(ctx, "sub");
        Variable b = var(new float[] {1}, "b", 1);
        Variable a = var(new float[] {2}, "a", 1);
        Variable c = var(new float[] {3}, "c", 1);
        Tensor t = Tensor.scalar(ctx, 4f);
        Variable frozen = Variable.create(ctx, t, Variable.options().name("frozen").trainable(false));
        ListObject list = ListObject.create(ctx);
        Trackable leaf = Trackable.create(ctx)) {
      root.set("b", b);
      root.set("a", a);
      root.set("sub", sub);
      sub.set("c", c);
      sub.set("frozen", frozen);
      list.append(leaf);
      root.set("list", list);
      List<String> names = new ArrayList<>();
      for (Variable v : root.variables()) {
        names.add(v.name());
        v.close();
      }
      assertEquals(List.of("a:0", "b:0", "c:0", "frozen:0"), names);
      List<Variable> trainable = root.trainableVariables();
      assertEquals(3, trainable.size());
      trainable.forEach(Variable::close);
      assertEquals(4, root.variables(false).size());
      List<Module> subs = root.submodules();
      assertEquals(1, subs.size());
      assertTrue(subs.get(0).sameObject(sub));
      subs.get(0).close();
      assertEquals(List.of("", "b", "a", "sub", "list", "sub/c", "sub/frozen", "list/0"), paths(root.walk()));
      List<ObjectPath> flat = root.flatten();
      assertTrue(paths(flat).containsAll(List.of("a", "b", "sub", "sub/c", "list/0")));
      List<ObjectPath> walk = root.walk();
      assertTrue(walk.get(0).object().sameObject(root));
      assertTrue(walk.get(4).object() instanceof ListObject);
      walk.forEach(ObjectPath::close);
      assertTrue(a.variables().isEmpty());
    }
  }

  @Test
  void listsAndDicts() {
    try (ListObject list = ListObject.create(ctx);
        DictObject dict = DictObject.create(ctx);
        Trackable x = Trackable.create(ctx);
        Trackable y = Trackable.create(ctx)) {
      assertEquals(ObjectKind.LIST, list.kind());
      assertEquals(ObjectKind.DICT, dict.kind());
      assertEquals(0, list.size());
      list.append(x);
      list.append(y);
      assertEquals(2, list.size());
      try (CairnObject first = list.get(0);
          CairnObject second = list.get("1")) {
        assertTrue(first.sameObject(x));
        assertTrue(second.sameObject(y));
      }
      list.set(0, y);
      try (Trackable first = list.get(0, Trackable.class)) {
        assertTrue(first.sameObject(y));
      }
      assertEquals(Code.OUT_OF_RANGE, assertThrows(CairnException.class, () -> list.get(2)).code());
      assertEquals(Code.OUT_OF_RANGE, assertThrows(CairnException.class, () -> list.set(5, x)).code());
      assertThrows(IndexOutOfBoundsException.class, () -> list.get(-1));
      assertThrows(ClassCastException.class, () -> list.get(0, Variable.class));
      assertEquals("ListObject(size 2)", list.toString());

      dict.set("b", x);
      dict.set("a", y);
      assertEquals(List.of("b", "a"), dict.keys());
      assertEquals(2, dict.size());
      try (CairnObject got = dict.get("a")) {
        assertTrue(got.sameObject(y));
      }
      dict.delete("b");
      assertEquals(List.of("a"), dict.keys());
      assertEquals(Code.NOT_FOUND, assertThrows(CairnException.class, () -> dict.get("b")).code());
      assertEquals(Code.NOT_FOUND, assertThrows(CairnException.class, () -> dict.delete("b")).code());
    }
  }

  @Test
  void handlesCloseInAnyOrderAndShare() {
    Trackable parent = Trackable.create(ctx);
    Variable v = var(new float[] {5}, "v", 1);
    parent.set("v", v);
    v.close(); // the edge keeps the variable alive
    v.close();
    assertTrue(v.isClosed());
    assertClosed("FAILED_PRECONDITION: Variable.read: variable is closed", v::read);
    assertEquals("Variable(closed)", v.toString());
    CairnObject shared = parent.share();
    assertTrue(shared instanceof Trackable);
    parent.close();
    ctx.close(); // objects keep their runtime alive
    try (shared;
        Variable again = shared.get("v", Variable.class);
        Tensor t = again.read()) {
      assertArrayEquals(new float[] {5}, t.toFloatArray());
    }
    assertClosed("FAILED_PRECONDITION: Trackable.create: context is closed", () -> Trackable.create(ctx));
  }

  @Test
  void variablesAreSafeToUpdateFromSeveralThreads() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try (Tensor zero = Tensor.scalar(ctx, 0L);
        Tensor one = Tensor.scalar(ctx, 1L);
        Variable counter = Variable.create(ctx, zero)) {
      List<Future<?>> futures = new ArrayList<>();
      for (int k = 0; k < 4; ++k) {
        futures.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 500; ++i) counter.assignAdd(one);
                }));
      }
      for (Future<?> f : futures) f.get();
      try (Tensor t = counter.read()) {
        assertArrayEquals(new long[] {2000}, t.toLongArray());
      }
    } finally {
      pool.shutdown();
    }
  }
}
