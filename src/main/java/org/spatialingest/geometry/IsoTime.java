package org.spatialingest.geometry;

/**
 * The common timestamp shape {@code yyyy-MM-ddTHH:mm:ss[.fraction]Z} to epoch millis without
 * java.time's general parser (several times faster); anything else returns {@link #NOT_SIMPLE} and
 * goes to {@code Instant.parse} / {@code OffsetDateTime.parse}.
 */
final class IsoTime {
  static final long NOT_SIMPLE = Long.MIN_VALUE;

  private IsoTime() {}

  static long utcMillis(String s) {
    int n = s.length();
    if (n < 20
        || s.charAt(n - 1) != 'Z'
        || s.charAt(4) != '-'
        || s.charAt(7) != '-'
        || s.charAt(10) != 'T'
        || s.charAt(13) != ':'
        || s.charAt(16) != ':') {
      return NOT_SIMPLE;
    }
    int year = digits(s, 0, 4);
    int month = digits(s, 5, 2);
    int day = digits(s, 8, 2);
    int hour = digits(s, 11, 2);
    int minute = digits(s, 14, 2);
    int second = digits(s, 17, 2);
    if (year < 0
        || month < 1
        || month > 12
        || day < 1
        || day > daysIn(year, month)
        || hour < 0
        || hour > 23
        || minute < 0
        || minute > 59
        || second < 0
        || second > 59) {
      return NOT_SIMPLE;
    }
    int millis = 0;
    if (n > 20) {
      if (s.charAt(19) != '.' || n - 21 < 1 || n - 21 > 9) {
        return NOT_SIMPLE;
      }
      int scale = 100;
      for (int i = 20; i < n - 1; i++) {
        int d = s.charAt(i) - '0';
        if (d < 0 || d > 9) {
          return NOT_SIMPLE;
        }
        millis += d * scale;
        scale /= 10;
      }
    }
    long days = epochDay(year, month, day);
    return ((days * 24 + hour) * 60 + minute) * 60_000L + second * 1000L + millis;
  }

  private static int digits(String s, int from, int count) {
    int v = 0;
    for (int i = from; i < from + count; i++) {
      int d = s.charAt(i) - '0';
      if (d < 0 || d > 9) {
        return -1;
      }
      v = v * 10 + d;
    }
    return v;
  }

  private static int daysIn(int year, int month) {
    return switch (month) {
      case 2 -> (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28;
      case 4, 6, 9, 11 -> 30;
      default -> 31;
    };
  }

  /** Days since 1970-01-01 (proleptic Gregorian), as java.time.LocalDate#toEpochDay computes it. */
  private static long epochDay(long year, int month, int day) {
    long total = 365 * year;
    if (year >= 0) {
      total += (year + 3) / 4 - (year + 99) / 100 + (year + 399) / 400;
    } else {
      total -= year / -4 - year / -100 + year / -400;
    }
    total += (367 * month - 362) / 12;
    total += day - 1;
    if (month > 2) {
      total--;
      if (!((year & 3) == 0 && ((year % 100) != 0 || (year % 400) == 0))) {
        total--;
      }
    }
    return total - 719528;
  }
}
