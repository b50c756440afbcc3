package dev.cairn;

import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A dict (TensorFlow's DictWrapper): string keys in insertion order, each entry a tracked edge
 * named by its key. Set, get and delete entries with {@link #set}, {@link #get} and {@link
 * #delete}.
 */
public final class DictObject extends CairnObject {
  DictObject(long handle) {
    super(handle);
  }

  /**
   * A new, empty dict.
   *
   * @param ctx the context
   * @return a new, empty dict
   */
  public static DictObject create(CairnContext ctx) {
    long c = ctx.handle();
    try {
      return new DictObject(CairnNative.dictCreate(c));
    } finally {
      Reference.reachabilityFence(ctx);
    }
  }

  /**
   * The number of entries.
   *
   * @return the number of entries
   */
  public long size() {
    return childCount();
  }

  /**
   * The keys in insertion order.
   *
   * @return the keys in insertion order
   */
  public List<String> keys() {
    List<ObjectPath> children = children();
    List<String> keys = new ArrayList<>(children.size());
    for (ObjectPath c : children) {
      keys.add(c.path());
      c.close();
    }
    return Collections.unmodifiableList(keys);
  }

  @Override
  String describe() {
    return "size " + size();
  }
}
