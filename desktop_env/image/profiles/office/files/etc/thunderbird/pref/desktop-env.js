// Thunderbird defaults for the office image: no first-run prompts, no network chatter.
// Debian's Thunderbird reads every file here as default prefs of any profile.
pref("mail.shell.checkDefaultClient", false);
pref("mail.provider.enabled", false);
pref("mail.provider.suppress_dialog_on_startup", true);   // no account setup tab without an account
pref("mailnews.start_page.enabled", false);
pref("mail.rights.version", 1);
pref("app.update.enabled", false);
pref("datareporting.policy.dataSubmissionEnabled", false);
pref("datareporting.healthreport.uploadEnabled", false);
pref("toolkit.telemetry.reportingpolicy.firstRun", false);
pref("mail.instrumentation.askUser", false);
pref("mail.instrumentation.postUrl", "");
pref("mail.spotlight.firstRunDone", true);
pref("mail.winsearch.firstRunDone", true);
pref("mailnews.auto_config_url", "");
pref("mail.accounthub.enabled", false);
