package dev.cairn;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for the tests' expected.json files (the JDK has none): objects become
 * LinkedHashMap (file order), arrays List, numbers BigDecimal (int64 extremes stay exact; a
 * negative zero is the Double -0.0), strings
 * String, true/false Boolean, null null. Throws IllegalArgumentException naming the offset.
 */
final class Json {
  private final String text;
  private int pos;

  private Json(String text) {
    this.text = text;
  }

  static Object parse(String text) {
    Json p = new Json(text);
    Object v = p.value();
    p.space();
    if (p.pos != text.length()) throw p.error("trailing characters");
    return v;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> object(Object v) {
    return (Map<String, Object>) v;
  }

  @SuppressWarnings("unchecked")
  static List<Object> array(Object v) {
    return (List<Object>) v;
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException("JSON: " + what + " at offset " + pos);
  }

  private void space() {
    while (pos < text.length() && " \t\r\n".indexOf(text.charAt(pos)) >= 0) ++pos;
  }

  private void expect(char c) {
    space();
    if (pos >= text.length() || text.charAt(pos) != c) throw error("expected '" + c + "'");
    ++pos;
  }

  private boolean take(char c) {
    space();
    if (pos < text.length() && text.charAt(pos) == c) {
      ++pos;
      return true;
    }
    return false;
  }

  private Object value() {
    space();
    if (pos >= text.length()) throw error("unexpected end");
    char c = text.charAt(pos);
    if (c == '{') {
      ++pos;
      Map<String, Object> out = new LinkedHashMap<>();
      if (take('}')) return out;
      do {
        space();
        String key = string();
        expect(':');
        out.put(key, value());
      } while (take(','));
      expect('}');
      return out;
    }
    if (c == '[') {
      ++pos;
      List<Object> out = new ArrayList<>();
      if (take(']')) return out;
      do {
        out.add(value());
      } while (take(','));
      expect(']');
      return out;
    }
    if (c == '"') return string();
    for (String word : new String[] {"true", "false", "null"}) {
      if (text.startsWith(word, pos)) {
        pos += word.length();
        return word.equals("null") ? null : Boolean.valueOf(word);
      }
    }
    int start = pos;
    while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) ++pos;
    if (start == pos) throw error("unexpected '" + c + "'");
    String number = text.substring(start, pos);
    BigDecimal value = new BigDecimal(number);
    // BigDecimal has no negative zero; F8 goldens hold one ("-0.0").
    return number.startsWith("-") && value.signum() == 0 ? (Number) Double.valueOf(-0.0) : value;
  }

  private String string() {
    if (pos >= text.length() || text.charAt(pos) != '"') throw error("expected a string");
    ++pos;
    StringBuilder out = new StringBuilder();
    while (true) {
      if (pos >= text.length()) throw error("unterminated string");
      char c = text.charAt(pos++);
      if (c == '"') return out.toString();
      if (c != '\\') {
        out.append(c);
        continue;
      }
      char e = text.charAt(pos++);
      switch (e) {
        case 'n': out.append('\n'); break;
        case 't': out.append('\t'); break;
        case 'r': out.append('\r'); break;
        case 'b': out.append('\b'); break;
        case 'f': out.append('\f'); break;
        case 'u':
          out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
          pos += 4;
          break;
        default: out.append(e); // " \ /
      }
    }
  }
}
