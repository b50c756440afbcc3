package dev.cairn;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Named values in order, as fit's callbacks, {@link Model#evaluate} and {@link
 * Model#trainOnBatch} report them (Keras' logs dict): "loss", then each compiled metric, then
 * after validation "val_loss", "val_...". A Java copy: it stays valid after the call that made it.
 */
public final class Logs {
  private final String[] names;
  private final double[] values;

  Logs(String[] names, double[] values) {
    this.names = names == null ? new String[0] : names;
    this.values = values == null ? new double[0] : values;
  }

  /** Copies the cairn_logs at {@code handle} (borrowed). */
  static Logs copy(long handle) {
    int n = (int) CairnNative.logsSize(handle);
    String[] names = new String[n];
    double[] values = new double[n];
    for (int i = 0; i < n; ++i) {
      names[i] = CairnNative.logsName(handle, i);
      values[i] = CairnNative.logsValue(handle, i);
    }
    return new Logs(names, values);
  }

  /** Copies and frees the cairn_logs at {@code handle} (owned; 0 gives empty logs). */
  static Logs take(long handle) {
    if (handle == 0) return new Logs(null, null);
    try {
      return copy(handle);
    } finally {
      CairnNative.logsFree(handle);
    }
  }

  /**
   * The number of values.
   *
   * @return the number of values
   */
  public int size() {
    return names.length;
  }

  /**
   * The names, in order.
   *
   * @return the names, in order
   */
  public List<String> names() {
    return Collections.unmodifiableList(Arrays.asList(names));
  }

  /**
   * Value {@code i}.
   *
   * @param i the index, below {@link #size()}
   * @return value {@code i}
   */
  public double value(int i) {
    return values[i];
  }

  /**
   * Whether there is a value named {@code name}.
   *
   * @param name the name
   * @return whether there is a value named {@code name}
   */
  public boolean has(String name) {
    return Arrays.asList(names).contains(name);
  }

  /**
   * The value named {@code name}; throws CairnException NOT_FOUND naming it and listing those
   * present.
   *
   * @param name the name, such as "loss" or "val_accuracy"
   * @return the value
   */
  public double get(String name) {
    for (int i = 0; i < names.length; ++i) {
      if (names[i].equals(name)) return values[i];
    }
    throw new CairnException(Code.NOT_FOUND, "Logs.get: no value \"" + name + "\" (the logs have "
        + String.join(", ", names) + ")");
  }

  /**
   * The values by name, in order.
   *
   * @return an unmodifiable map from name to value, in order
   */
  public Map<String, Double> asMap() {
    Map<String, Double> m = new LinkedHashMap<>();
    for (int i = 0; i < names.length; ++i) m.put(names[i], values[i]);
    return Collections.unmodifiableMap(m);
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("{");
    for (int i = 0; i < names.length; ++i) b.append(i == 0 ? "" : ", ").append(names[i]).append('=').append(values[i]);
    return b.append('}').toString();
  }
}
