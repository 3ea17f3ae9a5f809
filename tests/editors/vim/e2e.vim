" Vim 9 + ALE (Debian's vim-ale), in Ex mode, through what a user does: ALE and the linter
" definition from docs/editors.md (GG_INIT); open the file; wait for GG001 in ALE's loclist;
" :ALECodeAction on it and type the number of the first action; wait until the server, told of
" the change, withdraws GG001; :write.
"
"   vim -N -u NONE -i NONE -n -es -S e2e.vim
"
" Env: GG_FILE (the file, fixed in place), GG_INIT (the linter definition), GG_REPORT (JSON
"      written after every step), GG_LOG (progress; -es swallows :echo), GG_TIMEOUT_MS (per wait).
" Exit: 0, or the number of the step that failed.
let s:t0 = reltime()
let s:timeout = str2nr(empty($GG_TIMEOUT_MS) ? '15000' : $GG_TIMEOUT_MS)
let s:report = {'steps': []}

function! s:Ms() abort
  return reltimefloat(reltime(s:t0)) * 1000
endfunction
function! s:Log(msg) abort
  call writefile([printf('[%6.0f ms] %s', s:Ms(), a:msg)], $GG_LOG, 'a')
endfunction
function! s:Save() abort
  call writefile([json_encode(s:report)], $GG_REPORT)
endfunction
function! s:Step(name) abort
  call add(s:report.steps, {'name': a:name, 'ms': s:Ms()})
  call s:Save()
  call s:Log(a:name)
endfunction
function! s:Fail(code, msg) abort
  let s:report.error = a:msg
  call s:Save()
  call s:Log('FAIL: ' . a:msg)
  execute 'cquit ' . a:code
endfunction
" :sleep lets Vim read the server's output and run ALE's timers.
function! s:Wait(expr) abort
  let l:start = reltime()
  while !eval(a:expr)
    if reltimefloat(reltime(l:start)) * 1000 > s:timeout
      return 0
    endif
    sleep 10m
  endwhile
  return 1
endfunction

function! s:Main() abort
  let s:report.editor = printf('vim %d.%d, ale', v:version / 100, v:version % 100)
  call s:Log(s:report.editor)
  " ALE as a plugin (on the runtimepath above), the linter definition, g:ale_linters.
  filetype plugin on
  runtime plugin/ale.vim
  execute 'source ' . fnameescape($GG_INIT)
  let g:ale_linters = {'python': ['gradguard']}

  execute 'edit ' . fnameescape($GG_FILE)
  if &filetype !=# 'python' | call s:Fail(1, 'filetype is ' . &filetype) | endif

  " 1+2. the findings, as ALE's loclist holds them
  if !s:Wait('!empty(s:Findings(''GG001''))')
    call s:Fail(2, 'no GG001 in ALE''s loclist within ' . s:timeout . ' ms')
  endif
  let s:report.diagnostics = map(s:Findings(''), {_, d -> {'line': d.lnum, 'col': d.col,
  \   'code': get(d, 'code', ''), 'source': d.linter_name, 'message': d.text}})
  call s:Step('diagnostics')

  " 3. :ALECodeAction at the finding; ALE lists the actions and asks for a number
  let l:first = s:Findings('GG001')[0]
  call cursor(l:first.lnum, l:first.col)
  let l:tick = b:changedtick
  ALECodeAction
  if !s:Wait('b:changedtick != ' . l:tick)
    call s:Fail(3, 'the quick fix did not change the buffer')
  endif
  call s:Step('applied')

  " 4. the change reaches the server, which withdraws GG001. Vim fires TextChanged from its
  "    main loop, which Ex mode never enters: fire it as the main loop would.
  doautocmd TextChanged
  if !s:Wait('empty(s:Findings(''GG001''))')
    call s:Fail(4, 'GG001 still in the loclist after the fix')
  endif
  let s:report.after = map(s:Findings(''), {_, d -> get(d, 'code', '')})
  call s:Step('cleared')

  " 5. write and quit
  write
  call s:Step('written')
  ALEStopAllLSPs
  call s:Step('stopped')
  qall!
endfunction

function! s:Findings(code) abort
  return filter(copy(ale#engine#GetLoclist(bufnr(''))), {_, d -> get(d, 'linter_name', '') is# 'gradguard'
  \   && (a:code is# '' || get(d, 'code', '') is# a:code)})
endfunction

" ALE asks 'Type number and <Enter>' through ale#util#Input (a wrapper of input()): answer as a
" user would, with the number of the first action, after noting the list.
set runtimepath^=/usr/share/vim-ale
runtime autoload/ale/util.vim
function! ale#util#Input(message, value, ...) abort
  let s:report.prompt = a:message
  let s:report.actions = map(filter(split(a:message, "\n"), {_, l -> l =~# '^\d\+) '}),
  \   {_, l -> {'title': substitute(l, '^\d\+) ', '', '')}})
  let s:report.chosen = empty(s:report.actions) ? v:null : s:report.actions[0].title
  call s:Save()
  return '1'
endfunction

try
  call s:Main()
catch
  call s:Fail(9, 'Vim error: ' . v:exception . ' at ' . v:throwpoint)
endtry
