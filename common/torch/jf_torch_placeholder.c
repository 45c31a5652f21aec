int jf_torch_placeholder_(void); int jf_torch_placeholder_(void){return 0;}
