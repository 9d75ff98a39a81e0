/** An authenticated caller, as the authenticators hand it to authorization and admission. */
export interface UserInfo {
  readonly name: string;
  readonly groups: readonly string[];
  readonly uid?: string;
}

export const anonymousUser: UserInfo = { name: "system:anonymous", groups: ["system:unauthenticated"] };
