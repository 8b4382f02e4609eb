;;; lspmode-test.el --- loom-lsp in Emacs's lsp-mode, no loom code  -*- lexical-binding: t -*-
;;
;; Run by editors/generic/ci.sh: emacs -Q --batch -l lspmode-test.el, in
;; the project setup.sh made (LOOM_TEST_BIN, LOOM_TEST_PROJ). What the
;; user sees is what lsp-mode shows with `message' and asks with
;; `completing-read' / `y-or-n-p': those are recorded and answered here,
;; as a user would. Exits 0 when every check passes, 1 otherwise.

(load (expand-file-name "emacs-common.el" (file-name-directory load-file-name)) nil t)
(require 'lsp-mode)
(setq loom-client "lsp-mode")

(defun loom-ask (prompt)
  (lsp-request-async "workspace/executeCommand"
                     (list :command "loom.ask" :arguments (vector (list :prompt prompt)))
                     #'ignore))

(setq lsp-session-file (expand-file-name "lsp-session" temporary-file-directory)
      lsp-auto-guess-root t lsp-enable-file-watchers nil lsp-restart 'ignore
      lsp-keep-workspace-alive nil lsp-log-io nil lsp-enable-snippet nil)
(add-to-list 'lsp-language-id-configuration '(text-mode . "plaintext"))
(lsp-register-client
 (make-lsp-client :new-connection (lsp-stdio-connection (list loom-bin))
                  :activation-fn (lsp-activate-on "plaintext")
                  :server-id 'loom))
(find-file (expand-file-name "hello.txt" loom-proj))
(text-mode)
(lsp)
(loom-wait 30 "lsp-mode connects to loom-lsp" (lambda () (and (lsp-workspaces) (eq (lsp--workspace-status (car (lsp-workspaces))) 'initialized))))

;; No orderly shutdown at the end: in batch Emacs, lsp-mode may write to
;; the server after its exit and Emacs dies of SIGPIPE (exit 141, its
;; buffered output lost: 1 run in 4 here). Leaving Emacs ends loom-lsp
;; (its stdin closes).
(loom-scenario #'ignore)
