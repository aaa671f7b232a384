"use strict";
// Files a page carries travel compressed with Zstandard, then written in base85 over printable
// ASCII without < > & ' " \ ` ^ ~ (runbook/vendor.py). runbookUnpack(text) gives the bytes back,
// with the pinned fzstd. Loaded by the page and by the calculator's worker alike.
var runbookUnpack = (function () {
  var DIGITS = (function () {
    var excluded = "<>&'\"\\`^~";
    var table = new Uint8Array(128);
    for (var code = 33, digit = 0; code < 127; code++) {
      if (excluded.indexOf(String.fromCharCode(code)) < 0) table[code] = digit++;
    }
    return table;
  })();

  function decodeBase85(text) {
    text = text.trim();
    var whole = text.length - text.length % 5;
    var tail = text.length % 5;
    var out = new Uint8Array(whole / 5 * 4 + (tail ? tail - 1 : 0));
    var o = 0;
    var value;
    for (var i = 0; i < whole; i += 5) {
      value = DIGITS[text.charCodeAt(i)] * 52200625 + DIGITS[text.charCodeAt(i + 1)] * 614125 +
        DIGITS[text.charCodeAt(i + 2)] * 7225 + DIGITS[text.charCodeAt(i + 3)] * 85 + DIGITS[text.charCodeAt(i + 4)];
      out[o++] = value >>> 24;
      out[o++] = (value >>> 16) & 255;
      out[o++] = (value >>> 8) & 255;
      out[o++] = value & 255;
    }
    if (tail) {
      value = 0;
      for (var k = 0; k < 5; k++) value = value * 85 + (k < tail ? DIGITS[text.charCodeAt(whole + k)] : 84);
      for (k = 0; k < tail - 1; k++) out[o++] = (value >>> (24 - 8 * k)) & 255;
    }
    return out;
  }

  return function unpack(text) {
    return self.fzstd.decompress(decodeBase85(text));
  };
})();
