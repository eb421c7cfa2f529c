{ SPDX-License-Identifier: BSD-2-Clause }
{
  fpcexc N [unhandled] -- Free Pascal exceptions, whose runtime keeps its
  own setjmp (fpc_setjmp, called by every try block: it stores its return
  address) and walks the frame-pointer chain at every raise (the
  exception's backtrace), reading each frame's return address.

  outer(i) for i in 1..N: outer's try/except calls mid(i); mid's
  try/finally calls inner(i), which raises for i mod 3 = 0.
  With "unhandled", main then calls outer_unhandled(3), whose inner raises
  with no handler: the runtime prints the exception's backtrace (code
  addresses, the same every run: the program is static, not PIE) on
  stdout and exits 217.
  Exact counts: outer N, mid N, inner N (N+1 with "unhandled"),
  outer_unhandled 0 (1 with "unhandled"); FPC names them
  P$FPCEXC_$$_OUTER$LONGINT, ...
  Output: stdout "caught=C sum=S" (C = N div 3), then
  "calls: outer=N mid=N inner=N" (its own counts before the unhandled
  raise); exit status 0 (217 with "unhandled"); usage errors exit 2.
}
program fpcexc;
{$mode objfpc}
uses SysUtils;

var
  n_outer, n_mid, n_inner, caught, sum: longint;

procedure inner(n: longint);
begin
  inc(n_inner);
  if n mod 3 = 0 then
    raise Exception.Create('boom');
  sum := sum + n;
end;

procedure mid(n: longint);
var
  s: ansistring;
begin
  inc(n_mid);
  s := IntToStr(n);
  try
    inner(n);
  finally
    sum := sum + length(s);
  end;
end;

procedure outer(n: longint);
begin
  inc(n_outer);
  try
    mid(n);
  except
    on E: Exception do
      inc(caught);
  end;
end;

procedure outer_unhandled(n: longint);
begin
  inner(n);
end;

var
  i, n: longint;
begin
  n := StrToIntDef(ParamStr(1), -1);
  if (ParamCount < 1) or (n < 0) then
  begin
    writeln(stderr, 'usage: fpcexc N [unhandled]');
    halt(2);
  end;
  for i := 1 to n do
    outer(i);
  writeln('caught=', caught, ' sum=', sum);
  writeln('calls: outer=', n_outer, ' mid=', n_mid, ' inner=', n_inner);
  if ParamStr(2) = 'unhandled' then
    outer_unhandled(3);
end.
