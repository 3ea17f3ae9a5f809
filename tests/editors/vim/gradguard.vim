function! GradguardRoot(buffer) abort
  " the folder of the nearest pyproject.toml, else the file's own folder
  let l:pyproject = ale#path#FindNearestFile(a:buffer, 'pyproject.toml')
  return fnamemodify(empty(l:pyproject) ? bufname(a:buffer) : l:pyproject, ':p:h')
endfunction
call ale#linter#Define('python', {
\   'name': 'gradguard',
\   'lsp': 'stdio',
\   'executable': 'gradguard',
\   'command': '%e lsp',
\   'project_root': function('GradguardRoot'),
\})
