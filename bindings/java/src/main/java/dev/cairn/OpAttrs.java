package dev.cairn;

import java.util.Arrays;

/**
 * The attributes of one op call, by name, for {@link CairnContext#run}. The generated wrappers in
 * {@link Ops} fill one in from their typed parameters; use this class directly for an op the
 * wrappers do not know. Setting a name again replaces its value. Attributes left out take their
 * defaults. Not thread-safe to mutate.
 */
public final class OpAttrs {
  private int size;
  private Object[] names = new Object[4]; // byte[] (UTF-8)
  private int[] kinds = new int[4];
  private long[] ints = new long[4]; // INT, BOOL
  private double[] floats = new double[4]; // FLOAT
  private int[] dtypes; // DTYPE
  private Object[] intLists; // INTS: long[]
  private Object[] strings; // STRING: byte[]
  private Object[] floatLists; // FLOATS: double[]

  /** An empty attribute set. */
  public OpAttrs() {}

  /**
   * Sets attribute {@code name} to an integer (INT).
   *
   * @param name the attribute's name, e.g. "transpose_a"
   * @param value the value
   * @return this
   */
  public OpAttrs setInt(String name, long value) {
    ints[slot(name, AttrKind.INT)] = value;
    return this;
  }

  /**
   * Sets attribute {@code name} to a boolean (BOOL).
   *
   * @param name the attribute's name, e.g. "transpose_a"
   * @param value the value
   * @return this
   */
  public OpAttrs setBool(String name, boolean value) {
    ints[slot(name, AttrKind.BOOL)] = value ? 1 : 0;
    return this;
  }

  /**
   * Sets attribute {@code name} to a number (FLOAT).
   *
   * @param name the attribute's name, e.g. "transpose_a"
   * @param value the value
   * @return this
   */
  public OpAttrs setFloat(String name, double value) {
    floats[slot(name, AttrKind.FLOAT)] = value;
    return this;
  }

  /**
   * Sets attribute {@code name} to a dtype (DTYPE).
   *
   * @param name the attribute's name, e.g. "transpose_a"
   * @param value the value
   * @return this
   */
  public OpAttrs setDType(String name, DType value) {
    if (value == null) throw new NullPointerException(name);
    int k = slot(name, AttrKind.DTYPE);
    if (dtypes == null) dtypes = new int[names.length];
    dtypes[k] = value.value();
    return this;
  }

  /**
   * Sets attribute {@code name} to a list of integers (copied) (INTS).
   *
   * @param name the attribute's name, e.g. "transpose_a"
   * @param value the value
   * @return this
   */
  public OpAttrs setInts(String name, long... value) {
    if (value == null) throw new NullPointerException(name);
    int k = slot(name, AttrKind.INTS);
    if (intLists == null) intLists = new Object[names.length];
    intLists[k] = value.clone();
    return this;
  }

  /**
   * Sets attribute {@code name} to a string (STRING).
   *
   * @param name the attribute's name, e.g. "transpose_a"
   * @param value the value
   * @return this
   */
  public OpAttrs setString(String name, String value) {
    if (value == null) throw new NullPointerException(name);
    byte[] bytes = NativeResources.cstr(value);
    int k = slot(name, AttrKind.STRING);
    if (strings == null) strings = new Object[names.length];
    strings[k] = bytes;
    return this;
  }

  /**
   * Sets attribute {@code name} to a list of numbers (copied) (FLOATS).
   *
   * @param name the attribute's name, e.g. "transpose_a"
   * @param value the value
   * @return this
   */
  public OpAttrs setFloats(String name, double... value) {
    if (value == null) throw new NullPointerException(name);
    int k = slot(name, AttrKind.FLOATS);
    if (floatLists == null) floatLists = new Object[names.length];
    floatLists[k] = value.clone();
    return this;
  }

  /**
   * How many attributes are set.
   *
   * @return how many attributes are set
   */
  public int size() {
    return size;
  }

  private int slot(String name, AttrKind kind) {
    byte[] bytes = NativeResources.cstr(name);
    if (bytes == null) throw new NullPointerException("attribute name");
    for (int k = 0; k < size; ++k) {
      if (Arrays.equals((byte[]) names[k], bytes)) {
        kinds[k] = kind.value();
        if (intLists != null) intLists[k] = null;
        if (strings != null) strings[k] = null;
        if (floatLists != null) floatLists[k] = null;
        return k;
      }
    }
    if (size == names.length) grow();
    names[size] = bytes;
    kinds[size] = kind.value();
    return size++;
  }

  private void grow() {
    int n = names.length * 2;
    names = Arrays.copyOf(names, n);
    kinds = Arrays.copyOf(kinds, n);
    ints = Arrays.copyOf(ints, n);
    floats = Arrays.copyOf(floats, n);
    if (dtypes != null) dtypes = Arrays.copyOf(dtypes, n);
    if (intLists != null) intLists = Arrays.copyOf(intLists, n);
    if (strings != null) strings = Arrays.copyOf(strings, n);
    if (floatLists != null) floatLists = Arrays.copyOf(floatLists, n);
  }

  /** cairn_op_num_outputs: how many outputs {@code op} gives with {@code attrs} (null for none). */
  static int numOutputs(byte[] op, OpAttrs attrs) {
    long n;
    if (attrs == null) {
      n = CairnNative.opNumOutputs(op, null, null, null, null, null, null, null, null);
    } else {
      int size = attrs.size;
      n =
          CairnNative.opNumOutputs(
              op,
              Arrays.copyOf(attrs.names, size),
              Arrays.copyOf(attrs.kinds, size),
              Arrays.copyOf(attrs.ints, size),
              Arrays.copyOf(attrs.floats, size),
              attrs.intLists == null ? null : Arrays.copyOf(attrs.intLists, size),
              attrs.strings == null ? null : Arrays.copyOf(attrs.strings, size),
              attrs.dtypes == null ? null : Arrays.copyOf(attrs.dtypes, size),
              attrs.floatLists == null ? null : Arrays.copyOf(attrs.floatLists, size));
    }
    if (n > Integer.MAX_VALUE) throw new IllegalStateException("op output count " + n + " does not fit an array");
    return (int) n;
  }

  /** Runs the op through the raw layer with these attributes as parallel arrays. */
  void opRun(long ctx, byte[] op, long[] inputs, long[] outputs) {
    CairnNative.opRun(
        ctx,
        op,
        inputs,
        Arrays.copyOf(names, size),
        Arrays.copyOf(kinds, size),
        Arrays.copyOf(ints, size),
        Arrays.copyOf(floats, size),
        intLists == null ? null : Arrays.copyOf(intLists, size),
        strings == null ? null : Arrays.copyOf(strings, size),
        dtypes == null ? null : Arrays.copyOf(dtypes, size),
        floatLists == null ? null : Arrays.copyOf(floatLists, size),
        outputs);
  }
}
