// SPDX-License-Identifier: MIT
// Known lengths, counted by hand: named functions `outer` (lines 6-14), `inner` (8-11) and
// `short` (15); the anonymous ones count toward the function they are in.
(function () {
  'use strict';
  function outer(x) {
    const re = /[{'"]/;
    function inner(y) {
      const s = '}' + "{" + `${y}}`;
      return s + re;
    }
    [1, 2].forEach(function (v) { return v; });
    return inner(x);
  }
  function short(a) { return a; }
  outer(short(1));
})();
