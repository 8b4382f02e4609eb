;;; eglot-test.el --- loom-lsp in Emacs's eglot, no loom code  -*- lexical-binding: t -*-
;;
;; Run by editors/generic/ci.sh: emacs -Q --batch -l eglot-test.el, in
;; the project setup.sh made (LOOM_TEST_BIN, LOOM_TEST_PROJ). What the
;; user sees is what eglot shows with `message' and asks with
;; `completing-read' / `y-or-n-p': those are recorded and answered here,
;; as a user would. Exits 0 when every check passes, 1 otherwise.

(load (expand-file-name "emacs-common.el" (file-name-directory load-file-name)) nil t)
(require 'eglot)
(setq loom-client "eglot")

(defun loom-ask (prompt)
  ;; Asynchronously: eglot 1.9's synchronous request (eglot-execute-command)
  ;; leaves the messages that arrive in the same read as its reply unparsed
  ;; until more output comes; with the scripted model the whole turn does.
  ;; (loom writes a log line a moment after each question, so a question
  ;; is never stuck that way; see askClient.)
  (jsonrpc-async-request (eglot-current-server) :workspace/executeCommand
                         (list :command "loom.ask" :arguments (vector (list :prompt prompt)))
                         :success-fn #'ignore))

(add-to-list 'eglot-server-programs `(text-mode . (,loom-bin)))
(setq eglot-sync-connect 10 eglot-connect-timeout 30)
(find-file (expand-file-name "hello.txt" loom-proj))
(text-mode)
;; M-x eglot, as a user starts it (eglot-ensure waits for a command loop
;; batch mode does not run).
(eglot '(text-mode) (project-current) 'eglot-lsp-server
       (append (list loom-bin) (when (getenv "LOOM_TEST_LOG") (list "-log" (getenv "LOOM_TEST_LOG") "-log-level" "debug"))) "plaintext")
(loom-wait 30 "eglot connects to loom-lsp" #'eglot-current-server)

;; The session every client goes through (emacs-common.el), then what
;; only eglot could get wrong: it rejected messages with members the
;; standard does not have ("Keyword argument :loom not one of").
(add-hook 'kill-emacs-hook
          (lambda ()
            (when (getenv "LOOM_TEST_DEBUG")
              (ignore-errors (princ (with-current-buffer (jsonrpc-events-buffer (eglot-current-server)) (buffer-string)))))))
(loom-scenario
 (lambda ()
   (loom-check (not (string-match-p "not one of" (loom-shown-text)))
               "no message is rejected (standard members only)" (loom-shown-text))
   (eglot-shutdown (eglot-current-server))))
