;;; e2e.el --- Emacs + Eglot, in batch, through what a user does  -*- lexical-binding: t -*-
;; The configuration from docs/editors.md (GG_INIT) makes python-mode start gradguard
;; (`eglot-ensure'); wait for GG001 in Flymake; M-x eglot-code-actions at the finding and RET
;; (the default is the preferred quick fix); wait until the server, told of the change, withdraws
;; GG001; save.
;;
;;   emacs --batch -q -l e2e.el     (-q, not -Q: Debian's site-start puts elpa-eglot on the load-path)
;;
;; Env: GG_FILE (the file, fixed in place), GG_INIT (the user's init snippet),
;;      GG_REPORT (JSON written after every step), GG_TIMEOUT_MS (per wait).
;; Exit: 0, or the number of the step that failed.
(require 'cl-lib)
(require 'json)
(require 'python)
(require 'flymake)

(defvar gg-t0 (float-time))
(defvar gg-report nil "Alist written as JSON to GG_REPORT.")
(defvar gg-timeout (/ (string-to-number (or (getenv "GG_TIMEOUT_MS") "15000")) 1000.0))

(defun gg-log (fmt &rest args)
  (princ (format "[%6.0f ms] %s\n" (* 1000 (- (float-time) gg-t0)) (apply #'format fmt args))))
(defun gg-put (key value)
  (setf (alist-get key gg-report) value)
  (with-temp-file (getenv "GG_REPORT") (insert (json-encode gg-report))))
(defun gg-step (name)
  (gg-put 'steps (append (alist-get 'steps gg-report)
                         (list `((name . ,name) (ms . ,(* 1000 (- (float-time) gg-t0)))))))
  (gg-log "%s" name))
(defun gg-fail (code fmt &rest args)
  (let ((msg (apply #'format fmt args)))
    (gg-put 'error msg)
    (gg-log "FAIL: %s" msg)
    (kill-emacs code)))
(defun gg-wait (pred)
  "Read the server's output until PRED holds or the timeout passes."
  (let ((deadline (+ (float-time) gg-timeout)) ok)
    (while (and (not (setq ok (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.02)
      ;; Batch Emacs is never idle, so Eglot's didChange and Flymake's checks, which are idle
      ;; timers, would never run: run them by hand.
      (dolist (timer timer-idle-list)
        (when (timerp timer) (timer-event-handler timer))))
    ok))

(defun gg-lsp-diag (d)
  (cdr (assoc 'eglot-lsp-diag (if (fboundp 'eglot--diag-data) (eglot--diag-data d)
                                (flymake-diagnostic-data d)))))
(defun gg-findings (&optional code)
  "Flymake's diagnostics from gradguard, in buffer order; only CODE's if given."
  (sort (cl-loop for d in (flymake-diagnostics)
                 for lsp = (gg-lsp-diag d)
                 when (and (equal (plist-get lsp :source) "gradguard")
                           (or (null code) (equal (plist-get lsp :code) code)))
                 collect d)
        (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))

(defun gg-main ()
  (load (getenv "GG_INIT") nil t)
  (require 'eglot)
  (require 'lisp-mnt)
  (gg-put 'editor (format "emacs %s, eglot %s" emacs-version
                          (or (ignore-errors (lm-version (locate-library "eglot.el"))) "?")))
  (gg-log "%s" (alist-get 'editor gg-report))
  ;; C-x C-f: the buffer is shown in a window (Flymake waits for that), python-mode's hook runs
  ;; eglot-ensure, and eglot-ensure connects when the command ends (post-command-hook).
  (find-file (getenv "GG_FILE"))
  (run-hooks 'post-command-hook)
  ;; 1. connected -------------------------------------------------------------------------
  (unless (gg-wait (lambda () (eglot-current-server)))
    (gg-fail 1 "eglot-ensure started no server for the buffer"))
  (gg-step "attached")
  ;; 2. the findings, as Flymake holds them ---------------------------------------------
  (unless flymake-mode (gg-fail 2 "flymake-mode is off"))
  (unless (gg-wait (lambda () (gg-findings "GG001")))
    (gg-fail 2 "no GG001 diagnostic in Flymake"))
  (gg-put 'diagnostics
          (cl-loop for d in (gg-findings)
                   for lsp = (gg-lsp-diag d)
                   collect (save-excursion
                             (goto-char (flymake-diagnostic-beg d))
                             `((line . ,(line-number-at-pos)) (col . ,(1+ (current-column)))
                               (code . ,(plist-get lsp :code)) (source . ,(plist-get lsp :source))
                               (message . ,(plist-get lsp :message))))))
  (gg-step "diagnostics")
  ;; 3. M-x eglot-code-actions RET at the finding -----------------------------------------
  (goto-char (flymake-diagnostic-beg (car (gg-findings "GG001"))))
  (let ((tick (buffer-chars-modified-tick))
        ;; typed at the keyboard, not chosen with the mouse: Eglot asks with completing-read
        (last-nonmenu-event ?\r))
    (advice-add 'completing-read :around
                (lambda (orig prompt collection &rest args)
                  (gg-put 'prompt prompt)
                  (gg-put 'actions
                          (cl-loop for (title . action) in collection
                                   collect `((title . ,title)
                                             (preferred . ,(eq (plist-get action :isPreferred) t)))))
                  ;; RET: completing-read returns the default, which Eglot makes the preferred action
                  (let ((chosen (apply orig prompt collection args)))
                    (gg-put 'chosen chosen)
                    chosen))
                '((name . gg-record)))
    (condition-case err
        (call-interactively #'eglot-code-actions)
      (error (gg-fail 3 "eglot-code-actions failed: %S" err)))
    (unless (gg-wait (lambda () (/= tick (buffer-chars-modified-tick))))
      (gg-fail 3 "the quick fix did not change the buffer")))
  (gg-step "applied")
  ;; 4. Eglot sent the change; the server re-analysed and withdrew GG001 -----------------
  (unless (gg-wait (lambda () (null (gg-findings "GG001"))))
    (gg-fail 4 "GG001 still shown after the fix"))
  (gg-put 'after (or (cl-loop for d in (gg-findings) collect (plist-get (gg-lsp-diag d) :code)) []))
  (gg-step "cleared")
  ;; 5. C-x C-s, and quit --------------------------------------------------------------------
  (save-buffer)
  (gg-step "written")
  (ignore-errors (eglot-shutdown (eglot-current-server)))
  (gg-step "stopped")
  (kill-emacs 0))

(condition-case err
    (gg-main)
  (error (gg-fail 9 "Lisp error: %S" err)))
