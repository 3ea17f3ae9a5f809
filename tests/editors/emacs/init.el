(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((python-mode python-ts-mode) . ("gradguard" "lsp"))))
(add-hook 'python-mode-hook #'eglot-ensure)      ; and/or python-ts-mode-hook
